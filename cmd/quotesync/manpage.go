package main

import (
	"context"
	_ "embed" // quotesync.8.tmpl
	"io"
	"maps"
	"slices"
	"strings"
	"text/template"
)

// internalVerbs are sub-commands for the packaging, left out of the
// usage: the man page's generator, and the unit's start condition.
var internalVerbs = map[string]verb{
	"manpage":    {"print the man page (roff), made from every command's help", runManpage},
	"configured": {"exit 0 when the token is in place (the unit's ExecCondition=)", runConfigured},
}

const manpageHelp = `Usage: quotesync manpage

Prints quotesync(8) in roff, made from the help of every command (the
same text as 'quotesync COMMAND --help'), so that the man page cannot
drift from the program. 'make deb' installs it as
/usr/share/man/man8/quotesync.8.gz.

Exit status: 0 printed, 1 the output could not be written, 2 bad flags.

Example:
  quotesync manpage | man -l -
`

func runManpage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("manpage", manpageHelp)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if _, err := io.WriteString(stdout, manPage(ctx)); err != nil {
		return failf(stderr, exitFailure, "quotesync manpage: %v", err)
	}
	return exitOK
}

//go:embed quotesync.8.tmpl
var manTemplate string

// manPage renders quotesync(8) (quotesync.8.tmpl): the usage, then each
// command's help.
func manPage(ctx context.Context) string {
	type command struct{ Name, Summary, Help string }
	var usageText strings.Builder
	usage(&usageText)
	v := struct {
		Version, Usage string
		Commands       []command
	}{Version: version, Usage: usageText.String()}
	for _, name := range slices.Sorted(maps.Keys(verbs)) {
		var help strings.Builder
		verbs[name].run(ctx, []string{"--help"}, &help, io.Discard)
		v.Commands = append(v.Commands, command{name, verbs[name].summary, help.String()})
	}
	var b strings.Builder
	// Must: the template is embedded, and TestManPage renders it.
	tmpl := template.Must(template.New("man").Funcs(template.FuncMap{"roff": roffEscape, "literal": roffLiteral}).Parse(manTemplate))
	if err := tmpl.Execute(&b, v); err != nil {
		panic(err) // not reached: v has every field the template reads
	}
	return b.String()
}

// roffEscape makes text safe inside a roff line: backslashes doubled (as
// \e), hyphens as \- (so that copied flags keep their ASCII hyphen).
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLiteral escapes preformatted lines (inside .nf/.fi): a line that
// starts with '.' or '\” would be a request, so \& goes before it.
func roffLiteral(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		line = roffEscape(line)
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
