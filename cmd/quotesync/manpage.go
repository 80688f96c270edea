package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
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

// manPage renders quotesync(8): the usage, then each command's help.
func manPage(ctx context.Context) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w(`.TH QUOTESYNC 8 "" "quotesync %s" "System Administration"`, roffEscape(version))
	w(".SH NAME")
	w(`quotesync \- sync daemon between a workshop's shop database and an insurer's quote service`)
	w(".SH SYNOPSIS")
	w(`.B quotesync`)
	w(`.I command`)
	w(`.RI [ flags ]`)
	w(".SH DESCRIPTION")
	w("quotesync keeps a vehicle repair workshop's shop\\-management database (MySQL or MariaDB) and an insurer's Repairer Quotation Integration Service in step: it accepts the insurer's pending quote requests with job numbers from the shop, pushes Draft estimates built from the shop's lines, and submits them once the shop marks them final; never twice. The service runs")
	w(".B quotesync run")
	w("under systemd (quotesync.service); the other commands are the operator's.")
	w(".PP")
	w(".nf")
	var usageText bytes.Buffer
	usage(&usageText)
	b.WriteString(roffLiteral(usageText.String()))
	w(".fi")
	w(".SH COMMANDS")
	for _, name := range slices.Sorted(maps.Keys(verbs)) {
		var help bytes.Buffer
		verbs[name].run(ctx, []string{"--help"}, &help, io.Discard)
		w(`.SS "quotesync %s"`, roffEscape(name))
		w("%s", roffEscape(verbs[name].summary)+".")
		w(".PP")
		w(".nf")
		b.WriteString(roffLiteral(help.String()))
		w(".fi")
	}
	w(".SH FILES")
	for _, f := range [][2]string{
		{"/etc/quotesync/config.yaml", "the configuration (config.example.yaml documents every key; quotesync config shows what is in force)"},
		{"/etc/quotesync/credentials/", "the secrets, root only: token and db\\-password, handed to the service by LoadCredential="},
		{"/etc/quotesync/users", "the users of the status page's login (metrics.users_file; quotesync passwd writes it), read again on SIGHUP"},
		{"/run/quotesync/control.sock", "the daemon's control socket (quotesync sync\\-now)"},
		{"/usr/lib/systemd/system/quotesync.service", "the hardened unit"},
		{"/usr/share/doc/quotesync/", "README.md, the reference pages under docs/ (configuration, mapping, operations, troubleshooting and more), README.Debian, the changelog"},
	} {
		w(".TP")
		w(`.I %s`, roffEscape(f[0]))
		w("%s", f[1])
	}
	w(".SH SIGNALS")
	w(".TP\n.B SIGHUP\nre\\-reads the configuration, the users file and the listener's TLS certificate (systemctl reload quotesync)")
	w(".TP\n.B SIGUSR1\nstarts a pass at once unless one is running (systemctl kill \\-s USR1 quotesync; quotesync sync\\-now)")
	w(".TP\n.BR SIGTERM \", \" SIGINT\nstop after the pass in progress has recorded what it did")
	w(".SH SEE ALSO")
	w(".BR systemctl (1),")
	w(".BR journalctl (1),")
	w(".BR systemd.exec (5)")
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
