package sync

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func ptr[T any](v T) *T { return &v }

// TestHashLineExtras: a line without markup, is_on_report or metadata
// hashes as it did before the shop could supply them (no Draft is
// re-pushed after an upgrade), and each of them, once there, is part of
// the hash (a change of markup re-pushes the Draft).
func TestHashLineExtras(t *testing.T) {
	dec := decimal.RequireFromString
	e := testEngine(t, DefaultConfig())
	plain := []shopdb.Line{{LineID: "11", Order: 1, WorkType: "Parts", Description: "Clip", PartNumber: "P-1",
		Quantity: dec("2"), Price: dec("1.25"), Total: dec("2.50")}}
	// The hash of this quote as the releases before these fields made it.
	const before = "78a30b21a77b6647c3e1e341bc56ed6eaea28bf17dd122c203cdf07ff559547e"
	base := hashQuote(e.buildQuote("RO-1", plain, nil))
	if base != before {
		t.Errorf("hash of a line without extras = %s, want the earlier %s", base, before)
	}
	with := func(f func(l *shopdb.Line)) string {
		ls := slices.Clone(plain)
		f(&ls[0])
		return hashQuote(e.buildQuote("RO-1", ls, nil))
	}
	if got := with(func(l *shopdb.Line) { l.Metadata = map[string]string{} }); got != base {
		t.Errorf("empty metadata changed the hash: %s", got)
	}
	markup := with(func(l *shopdb.Line) { l.Markup = ptr(dec("10")) })
	for name, f := range map[string]func(l *shopdb.Line){
		"markup 10.5":     func(l *shopdb.Line) { l.Markup = ptr(dec("10.5")) },
		"markup 0":        func(l *shopdb.Line) { l.Markup = ptr(dec("0")) },
		"on report":       func(l *shopdb.Line) { l.OnReport = ptr(true) },
		"not on report":   func(l *shopdb.Line) { l.OnReport = ptr(false) },
		"metadata":        func(l *shopdb.Line) { l.Metadata = map[string]string{"colour": "blue"} },
		"metadata value":  func(l *shopdb.Line) { l.Metadata = map[string]string{"colour": "red"} },
		"markup 10.00 is": func(l *shopdb.Line) { l.Markup = ptr(dec("10.00")) },
	} {
		got := with(f)
		if name == "markup 10.00 is" {
			if got != markup {
				t.Errorf("markup 10.00 hashes %s, markup 10 %s: the same amount", got, markup)
			}
			continue
		}
		if got == base || got == markup {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

// TestHashQuoteFields: no quote-level fields (none configured, or none for
// the job) hash as before; each field and its value is part of the hash.
func TestHashQuoteFields(t *testing.T) {
	e := testEngine(t, DefaultConfig())
	lines := sampleLines()
	base := hashQuote(e.buildQuote("RO-1", lines, nil))
	if got := hashQuote(e.buildQuote("RO-1", lines, map[string]string{})); got != base {
		t.Errorf("empty fields changed the hash")
	}
	seen := map[string]string{base: "none"}
	for name, fields := range map[string]map[string]string{
		"one":       {"claimNote": "rear"},
		"value":     {"claimNote": "front"},
		"name":      {"assessor": "rear"},
		"two":       {"claimNote": "rear", "assessor": "J"},
		"htmlchars": {"claimNote": "<&>"},
	} {
		q := e.buildQuote("RO-1", lines, fields)
		for k, v := range fields {
			var got string
			if err := json.Unmarshal(q.Extra[k], &got); err != nil || got != v {
				t.Errorf("%s: field %s = %s (%v), want the JSON string %q", name, k, q.Extra[k], err, v)
			}
		}
		h := hashQuote(q)
		if other, dup := seen[h]; dup {
			t.Errorf("fields %s hash like %s", name, other)
		}
		seen[h] = name
	}
}

// quoteConfigs are quote settings a hash must hold under: the default,
// rates (one at the canonical form's edge), no referenceId, no type.
func quoteConfigs() []QuoteConfig {
	rated := DefaultConfig().Quote
	rated.Rates = map[string]decimal.Decimal{"RemoveReplaceLabour": dec("95.50"), "Parts": dec("-0.0001"), "": dec("1e30")}
	omit := DefaultConfig().Quote
	omit.OmitReferenceID = true
	return []QuoteConfig{DefaultConfig().Quote, rated, omit, {}}
}

// sameHash fails t unless the pass's hash of a job's lines (hashLines) is
// that of the quote built from them (hashQuote of buildQuote), the hash
// every pushed hash stored so far was made of, under each of cfgs.
func sameHash(t *testing.T, what, job string, lines []shopdb.Line, fields map[string]string) {
	t.Helper()
	for i, cfg := range quoteConfigs() {
		want := hashQuote(buildQuote(cfg, job, lines, fields))
		if got := hashLines(cfg, job, lines, fields); got != want {
			t.Errorf("%s, settings %d: hashLines = %s, hashQuote(buildQuote) = %s", what, i, got, want)
		}
	}
}

// TestHashLinesIsHashQuote: hashing a job's lines without building its
// quote gives the quote's hash, over odd and hostile lines and fields:
// texts that look like the canonical form's length prefixes, markers or
// JSON, bad UTF-8, amounts past int64 and in exponent form, the zero
// Decimal, empty and nil metadata, markup and is_on_report or not.
func TestHashLinesIsHashQuote(t *testing.T) {
	texts := []string{"", " ", ":", "1:", "3:abc", "12:x", "markup", "onreport", "true", "0", "-1",
		"<&>\u2028", "\xff\xfe", "é", "\x00", `"q"\`, strings.Repeat("x", 1000)}
	amounts := []decimal.Decimal{{}, dec("0"), dec("-0.000"), dec("95.5000"), dec("-0.05"), dec("1e3"), dec("1.5E-70"),
		dec("123456789012345678901234567890.125"), dec("9223372036854775807"), dec("-9223372036854775809")}
	rnd := rand.New(rand.NewPCG(1, 2))
	text := func() string { return texts[rnd.IntN(len(texts))] }
	amount := func() decimal.Decimal { return amounts[rnd.IntN(len(amounts))] }
	strs := func() map[string]string {
		switch n := rnd.IntN(5); n {
		case 0:
			return nil
		default:
			m := map[string]string{}
			for range n - 1 {
				m[text()] = text()
			}
			return m
		}
	}
	sameHash(t, "no lines", "RO-1", nil, nil)
	sameHash(t, "an empty slice of lines", "RO-1", []shopdb.Line{}, map[string]string{})
	for i := range 2000 {
		lines := make([]shopdb.Line, rnd.IntN(12))
		for k := range lines {
			l := shopdb.Line{Job: text(), LineID: text(), Order: rnd.IntN(1<<32) - 1<<31, Code: text(), WorkType: text(),
				Description: text(), PartNumber: text(), Quantity: amount(), Price: amount(), Total: amount(), Metadata: strs()}
			if rnd.IntN(2) == 0 {
				l.Markup = ptr(amount())
			}
			if n := rnd.IntN(3); n < 2 {
				l.OnReport = ptr(n == 1)
			}
			lines[k] = l
		}
		sameHash(t, fmt.Sprintf("case %d", i), text(), lines, strs())
	}
}

// TestHashLinesIsHashQuoteSampleShop: hashing the lines of the sample
// shop's jobs as shopdb reads them (with a quote field) without building
// their quotes gives their quotes' hashes.
func TestHashLinesIsHashQuoteSampleShop(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.Queries.QuoteFields = "SELECT job_no AS job, registration AS vehicle, claim_number AS claimNote FROM jobs WHERE job_no IN (:jobs)"
	db := d.Open(t, cfg)
	jobs, err := d.Shop().GenerateJobs(t.Context(), 40, 7)
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, sampleshop.JobDraft, sampleshop.JobFinal, sampleshop.JobNoLines, sampleshop.JobWalkIn, sampleshop.JobBadLine)
	all, err := db.Lines(t.Context(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	fields, _, err := db.QuoteFields(t.Context(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(all[sampleshop.JobDraft].Lines) == 0 || len(fields[sampleshop.JobDraft]) == 0 {
		t.Fatalf("job %s: lines %v, fields %v; want both", sampleshop.JobDraft, all[sampleshop.JobDraft], fields[sampleshop.JobDraft])
	}
	for _, job := range jobs {
		sameHash(t, job, job, all[job].Lines, fields[job])
	}
}
