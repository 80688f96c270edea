package main

import (
	"cmp"
	_ "embed" // init.yaml.tmpl
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/discover"
	qsync "github.com/quotesync/quotesync/sync"
)

// scalar writes s as a YAML scalar: plain when that reads back as the
// same string, else double-quoted by the YAML encoder itself (whose
// escapes are YAML's: Go's \xNN means a byte, YAML's a character).
func scalar(s string) string {
	if s != "" && isPlainScalar(s) {
		return s
	}
	b, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Tag: "!!str", Value: s})
	if err != nil {
		return strconv.Quote(s) // not reached: a string scalar always encodes
	}
	return strings.TrimSuffix(string(b), "\n")
}

func isPlainScalar(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == '/') {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err != nil && !strings.HasPrefix(s, "-")
}

// wrap splits text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var out []string
	for _, word := range strings.Fields(text) {
		if n := len(out); n > 0 && utf8.RuneCountInString(out[n-1])+1+utf8.RuneCountInString(word) <= width {
			out[n-1] += " " + word
		} else {
			out = append(out, word)
		}
	}
	return out
}

// shopConfig is the shop section init writes, as shopdb reads it.
func (s *initSession) shopConfig() shopdb.Config {
	q := s.q
	cfg := shopdb.Config{
		Addr: s.cfg.Addr, User: s.cfg.User, Database: s.cfg.Database, TLS: s.cfg.TLS,
		Params:    map[string]string{},
		WorkTypes: map[string]string{},
		Queries: shopdb.Queries{FindJob: q.FindJob, CreateJob: q.CreateJob, BookingDate: q.BookingDate,
			LineItems: q.LineItems, EstimateState: q.EstimateState, ShopChanged: q.ShopChanged, SampleJobs: q.SampleJobs},
	}
	for _, p := range q.Params {
		cfg.Params[p] = requestPaths[p]
	}
	for code, wc := range s.workTypes {
		if wc.Type != "" {
			cfg.WorkTypes[code] = wc.Type
		}
	}
	if len(cfg.WorkTypes) == 0 {
		cfg.WorkTypes["-"] = "-" // a placeholder for CheckQueries only: none is written
	}
	return cfg
}

// requestPaths are where the request's JSON carries what a parameter of
// init's queries needs.
var requestPaths = map[string]string{"registration": "vehicle.registration"}

//go:embed init.yaml.tmpl
var initTemplate string

// initView is what init.yaml.tmpl shows.
type initView struct {
	Date, Server, CodeColumn, Documented string
	PasswordFile, PasswordEnv            string
	Shop                                 shopdb.Config // the connection, from --dsn
	Q                                    discover.Queries
	Paths                                map[string]string // requestPaths
	Mapped                               bool              // a code has a work type
	Codes                                []initCode
}

// initCode is one operation code of shop.work_types.
type initCode struct {
	Code, Type, Seen string
	Proposed         bool
}

// render writes the whole configuration file (init.yaml.tmpl). failed are
// the queries the server refused, by key: the error goes beside the
// query. The template's functions write lines, each after a newline:
// comments made safe (data never ends a comment line early), and SQL as
// literal block scalars.
func (s *initSession) render(failed map[string]string) string {
	v := initView{Date: time.Now().Format("2006-01-02"), Server: s.schema.Server, PasswordFile: s.o.passwordFile,
		PasswordEnv: initPasswordEnv, CodeColumn: s.p.Lines.Name + "." + s.p.Code.Name, Shop: s.cfg, Q: s.q,
		Documented: strings.Join(qsync.DocumentedWorkTypes, ", "), Paths: requestPaths}
	for _, c := range slices.Sorted(maps.Keys(s.workTypes)) {
		wc := s.workTypes[c]
		ic := initCode{Code: c, Type: wc.Type, Proposed: wc.Proposed, Seen: qsync.Plural(int(wc.Count), "line")}
		if wc.Count == 0 {
			ic.Seen = "not seen in the newest lines"
		}
		v.Mapped = v.Mapped || wc.Type != ""
		v.Codes = append(v.Codes, ic)
	}
	refused := func(key string) string {
		if msg, ok := failed[key]; ok {
			return comment(4, true, "the server refused this statement: "+msg)
		}
		return ""
	}
	indent := func(n int, text string) string {
		return strings.ReplaceAll("\n"+text, "\n", "\n"+strings.Repeat(" ", n))
	}
	funcs := template.FuncMap{"comment": func(indent int, check bool, text string) string { return comment(2*indent, check, text) },
		"scalar": scalar, "refused": refused, "indent": indent,
		"sql": func(key, sql string) string { return refused(key) + "\n    " + key + ": |-" + indent(6, sql) },
		"notes": func(key string) string {
			var b strings.Builder
			for _, n := range s.q.Notes[key] {
				b.WriteString(comment(4, n.Check, n.Text))
			}
			return b.String()
		},
		"choices": func(roles ...string) string {
			var b strings.Builder
			for _, r := range roles {
				if c, ok := s.p.Choice(r); ok {
					b.WriteString(comment(4, c.Guess, describeChoice(c)))
				}
			}
			return b.String()
		},
	}
	var b strings.Builder
	// Must: the template is embedded, and every init test executes it.
	if err := template.Must(template.New("init").Funcs(funcs).Parse(initTemplate)).Execute(&b, v); err != nil {
		panic(err) // not reached: the view has every field the template reads
	}
	return strings.TrimPrefix(b.String(), "\n")
}

// comment is text as comment lines at indent (spaces), each after a
// newline, wrapped at 78 columns; check marks it "CHECK:". Text from the
// shop's data stays on its line: termtext.Safe escapes line breaks, and
// the line and paragraph separators, which YAML 1.1 readers take for line
// breaks.
func comment(indent int, check bool, text string) string {
	text = termtext.Safe(text)
	if check {
		text = "CHECK: " + text
	}
	pad := strings.Repeat(" ", indent) + "# "
	var b strings.Builder
	for i, l := range wrap(text, 78-len(pad)) {
		if i > 0 && check {
			l = "  " + l
		}
		b.WriteString("\n" + pad + l)
	}
	return b.String()
}

// describeChoice writes one choice with its runner-up and evidence.
func describeChoice(c discover.Choice) string {
	if c.Why != "" {
		return c.Label + ": " + chosenOf(c) + ": " + c.Why
	}
	return c.Label + ": " + chosenOf(c)
}

// chosenOf is a choice's winner ("none") with its runner-up.
func chosenOf(c discover.Choice) string {
	s := cmp.Or(c.Chosen, "none")
	if c.RunnerUp != "" {
		s += " (runner-up " + c.RunnerUp + ")"
	}
	return s
}
