package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/discover"
	qsync "github.com/quotesync/quotesync/sync"
)

// yamlWriter writes the configuration: keys, block scalars for SQL, and
// comments made safe (data never ends a comment line early).
type yamlWriter struct {
	b strings.Builder
}

func (w *yamlWriter) line(indent int, format string, a ...any) {
	w.b.WriteString(strings.Repeat("  ", indent))
	fmt.Fprintf(&w.b, format, a...)
	w.b.WriteByte('\n')
}

// comment writes text as comment lines at indent, wrapped at 78 columns;
// check marks it "CHECK:". Text from the shop's data stays on its line:
// termtext.Safe escapes line breaks, and the line and paragraph
// separators, which YAML 1.1 readers take for line breaks.
func (w *yamlWriter) comment(indent int, check bool, text string) {
	text = termtext.Safe(text)
	if check {
		text = "CHECK: " + text
	}
	pad := strings.Repeat("  ", indent) + "# "
	first := true
	for _, l := range wrap(text, 78-len(pad)) {
		if !first && check {
			l = "  " + l
		}
		w.b.WriteString(pad + l + "\n")
		first = false
	}
}

func (w *yamlWriter) blank() { w.b.WriteByte('\n') }

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

// block writes a multi-line SQL statement as a literal block scalar.
func (w *yamlWriter) block(indent int, key, sql string) {
	w.line(indent, "%s: |-", key)
	for _, l := range strings.Split(sql, "\n") {
		w.line(indent+1, "%s", l)
	}
}

// wrap splits text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var out []string
	var cur strings.Builder
	for _, word := range strings.Fields(text) {
		if cur.Len() > 0 && len([]rune(cur.String()))+1+len([]rune(word)) > width {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
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

// render writes the whole configuration file. failed are the queries the
// server refused, by key: the error goes beside the query.
func (s *initSession) render(failed map[string]string) string {
	w := &yamlWriter{}
	w.comment(0, false, fmt.Sprintf("quotesync configuration written by `quotesync init` on %s from database %s at %s (%s).",
		time.Now().Format("2006-01-02"), s.cfg.Database, s.cfg.Addr, s.schema.Server))
	w.line(0, "#")
	w.comment(0, false, "Each choice init made is explained beside it, with the runner-up; a line starting \"# CHECK:\" marks a guess to confirm. Then `quotesync check --config FILE` proves the mapping on the shop's own rows, and `quotesync preview --config FILE JOB` shows the quote of one job exactly as a pass would send it. Every key, with its default, is documented in config.example.yaml (installed as /etc/quotesync/config.yaml by the package); `quotesync config` shows them all.")
	w.blank()
	w.line(0, "remote:")
	w.comment(1, true, "the insurer's service: its address, and where its token comes from (a file, normally a systemd credential; or env, or oauth2).")
	w.line(1, "base_url: https://api.insurer.example")
	w.line(1, "token:")
	w.line(2, "file: ${CREDENTIALS_DIRECTORY}/token")
	w.blank()
	w.line(0, "shop:")
	w.line(1, "addr: %s", scalar(s.cfg.Addr))
	w.line(1, "user: %s", scalar(s.cfg.User))
	switch {
	case s.o.passwordFile != "":
		w.comment(1, false, "The password, from a file (under systemd, a credential: ${CREDENTIALS_DIRECTORY}/db-password).")
		w.line(1, "password_file: %s", scalar(s.o.passwordFile))
	case s.cfg.Password != "":
		w.comment(1, false, "The password, from this variable (under systemd, prefer password_file: ${CREDENTIALS_DIRECTORY}/db-password).")
		w.line(1, "password_env: %s", initPasswordEnv)
	default:
		w.comment(1, false, "No password: the user logged in without one. For one, add password_file: ${CREDENTIALS_DIRECTORY}/db-password (a systemd credential).")
	}
	w.line(1, "database: %s", scalar(s.cfg.Database))
	if t := s.cfg.TLS; t != "" {
		w.comment(1, false, "TLS to the server, as --dsn asked for it.")
		w.line(1, "tls: %s", scalar(t))
	}
	if len(s.q.Params) > 0 {
		w.comment(1, false, "Values of the request that the queries read, by their path in the request's JSON.")
		w.line(1, "params:")
		for _, name := range s.q.Params {
			w.line(2, "%s: %s", name, requestPaths[name])
		}
	}
	s.renderWorkTypes(w)
	w.line(1, "queries:")
	s.renderQueries(w, failed)
	w.blank()
	w.line(0, "sync:")
	w.line(1, "schedule: %s", strconv.Quote("@every 1m"))
	w.blank()
	w.line(0, "quote:")
	w.line(1, "type: Estimate")
	w.comment(1, true, "your rates by work type, sent with every quote, e.g. RepairLabour: 95.50.")
	w.line(1, "rates: {}")
	w.blank()
	w.line(0, "log:")
	w.line(1, "level: info")
	w.line(1, "format: json")
	return w.b.String()
}

func (s *initSession) renderWorkTypes(w *yamlWriter) {
	p := s.p
	codeCol := p.Lines.Name + "." + p.Code.Name
	w.comment(1, false, fmt.Sprintf("The shop's operation codes (%s) → the service's work types (%s). A line whose code is not here holds its job back until it is added; `quotesync check` lists unmapped codes.",
		codeCol, strings.Join(qsync.DocumentedWorkTypes, ", ")))
	codes := slices.Sorted(maps.Keys(s.workTypes))
	mapped := 0
	for _, c := range codes {
		if s.workTypes[c].Type != "" {
			mapped++
		}
	}
	if mapped == 0 {
		w.comment(1, true, "no code is mapped yet: quotesync refuses the file until at least one is. Add each code under work_types, e.g. \"R&R\": RemoveReplaceLabour.")
		w.line(1, "work_types: {}")
	} else {
		w.line(1, "work_types:")
	}
	for _, c := range codes {
		wc := s.workTypes[c]
		seen := qsync.Plural(int(wc.Count), "line")
		if wc.Count == 0 {
			seen = "not seen in the newest lines"
		}
		switch {
		case wc.Type == "":
			w.comment(2, true, fmt.Sprintf("%s (%s): not mapped; its lines hold their job. Add: %s: WORKTYPE", scalar(c), seen, scalar(c)))
		case wc.Proposed:
			w.comment(2, true, fmt.Sprintf("proposed from the code's name (%s)", seen))
			w.line(2, "%s: %s", scalar(c), scalar(wc.Type))
		default:
			w.line(2, "%s: %s", scalar(c), scalar(wc.Type))
		}
	}
}

// renderQueries writes shop.queries: each query with the choices behind
// it and the notes of its writing.
func (s *initSession) renderQueries(w *yamlWriter, failed map[string]string) {
	q := s.q
	refused := func(key string) {
		if msg, ok := failed[key]; ok {
			w.comment(2, true, "the server refused this statement: "+msg)
		}
	}
	notes := func(key string) {
		for _, n := range q.Notes[key] {
			w.comment(2, n.Check, n.Text)
		}
	}
	choices := func(roles ...string) {
		for _, r := range roles {
			if c, ok := s.p.Choice(r); ok {
				w.comment(2, c.Guess, describeChoice(c))
			}
		}
	}
	if q.FindJob != "" {
		w.comment(2, false, "find_job: the existing job for a request.")
		choices(discover.RoleJobTable, discover.RoleJobNumber, discover.RoleClaim)
		notes("find_job")
		refused("find_job")
		w.block(2, "find_job", q.FindJob)
	} else {
		notes("find_job")
	}
	// A flat estimate table has none: its notes say why, and what a
	// request does instead.
	if len(q.CreateJob) > 0 {
		w.comment(2, false, "create_job: makes a job when find_job finds none, in the transaction that records the reservation; the last statement returns the new number.")
	}
	choices(discover.RoleNumbering, discover.RoleRegistration)
	notes("create_job")
	if len(q.CreateJob) > 0 {
		w.line(2, "create_job:")
	}
	for i, stmt := range q.CreateJob {
		refused(fmt.Sprintf("create_job[%d]", i))
		w.line(3, "- |-")
		for _, l := range strings.Split(stmt, "\n") {
			w.line(4, "%s", l)
		}
	}
	if q.BookingDate != "" {
		choices(discover.RoleBookingDate)
		refused("booking_date")
		w.block(2, "booking_date", q.BookingDate)
	}
	w.comment(2, false, "line_items: the estimate lines of the jobs in :jobs.")
	choices(discover.RoleLineTable, discover.RoleLineID, discover.RoleLineNo, discover.RoleCode, discover.RoleDescription,
		discover.RolePartNumber, discover.RoleQuantity, discover.RolePrice, discover.RoleTotal, discover.RoleSoftDelete)
	notes("line_items")
	w.comment(2, false, "line_items may also return markup, is_on_report and meta_<key> columns (see config.example.yaml).")
	refused("line_items")
	w.block(2, "line_items", q.LineItems)
	w.comment(2, false, "estimate_state: one row per job: final (submit it) and a change marker.")
	choices(discover.RoleStatus, discover.RoleLineUpdated)
	notes("estimate_state")
	refused("estimate_state")
	w.block(2, "estimate_state", q.EstimateState)
	notes("shop_changed")
	if q.ShopChanged != "" {
		refused("shop_changed")
		w.block(2, "shop_changed", q.ShopChanged)
	}
	if q.SampleJobs != "" {
		w.comment(2, false, "sample_jobs: read by `quotesync check` only: the newest jobs with a claim number, each found again through find_job, its lines and state read, to prove the mapping on real rows.")
		refused("sample_jobs")
		w.block(2, "sample_jobs", q.SampleJobs)
	}
}

// describeChoice writes one choice with its runner-up and evidence.
func describeChoice(c discover.Choice) string {
	chosen := c.Chosen
	if chosen == "" {
		chosen = "none"
	}
	s := fmt.Sprintf("%s: %s", c.Label, chosen)
	if c.RunnerUp != "" {
		s += " (runner-up " + c.RunnerUp + ")"
	}
	if c.Why != "" {
		s += ": " + c.Why
	}
	return s
}
