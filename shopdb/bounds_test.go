package shopdb_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestLineItemsBounds: amounts no repair estimate has, or with more digits
// than the remote's binary floating point keeps, make the job invalid with
// the line, the column, the bound and its key named (kind RowBounds, so
// that raising the bound and reloading releases it); raised bounds let
// them through.
func TestLineItemsBounds(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*fixtureRow)
		want   string // "" = valid with the defaults
		raised bool   // valid with the raised bounds
	}{
		{name: "Plausible", edit: func(r *fixtureRow) { r.qty, r.price = s("99999.9999"), s("9999999.9999") }},
		{name: "HugeQuantity", edit: func(r *fixtureRow) { r.qty = s("1e30") },
			want: "job %s line 7 (line_id 1234): column quantity is 1e30, beyond the plausible bound 100000 (shop.limits.max_quantity); fix the line in the shop, or raise the bound and reload"},
		{name: "NegativeHugeQuantity", edit: func(r *fixtureRow) { r.qty = s("-200000") },
			want: "job %s line 7 (line_id 1234): column quantity is -200000, beyond the plausible bound 100000 (shop.limits.max_quantity); fix the line in the shop, or raise the bound and reload", raised: true},
		{name: "HugePrice", edit: func(r *fixtureRow) { r.price = s("12345678.00") },
			want: "job %s line 7 (line_id 1234): column price is 12345678.00, beyond the plausible bound 10000000 (shop.limits.max_price); fix the line in the shop, or raise the bound and reload", raised: true},
		{name: "TooManyDigits", edit: func(r *fixtureRow) { r.price = s("0.1234567890123456") },
			want: "job %s line 7 (line_id 1234): column price is 0.1234567890123456, 16 significant digits: the remote reads numbers as binary floating point, which keeps only 15 exactly (shop.limits.max_digits); round the line in the shop", raised: true},
		{name: "HugeTotal", edit: func(r *fixtureRow) { r.total = s("1e20") },
			want: "job %s line 7 (line_id 1234): column total is 1e20, beyond the plausible bound 1000000000000 (shop.limits.max_quantity × shop.limits.max_price); fix the line in the shop, or raise the bound and reload"},
	}
	db, d := fixtureDB(t, true)
	cfg := d.Config()
	cfg.Queries.LineItems = `SELECT job, line_id, line_no, code, description, part_number, quantity, price, total
FROM fixture_lines WHERE job IN (:jobs) ORDER BY seq`
	cfg.AllowCredits = true
	cfg.Limits = shopdb.Limits{MaxQuantity: decimal.NewFromInt(1_000_000), MaxPrice: decimal.NewFromInt(100_000_000), MaxDigits: 16}
	raised := d.Open(t, cfg)
	var jobs []string
	for i, c := range cases {
		job := fmt.Sprintf("J-%02d", i)
		jobs = append(jobs, job)
		row := good()
		c.edit(&row)
		insertFixture(t, d, job, row)
	}
	_, bad, err := shopdbtest.LineItems(testContext(t), db, jobs)
	if err != nil {
		t.Fatal(err)
	}
	_, badRaised, err := shopdbtest.LineItems(testContext(t), raised, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := jobs[i]
			err := bad[job]
			if c.want == "" {
				if err != nil {
					t.Fatalf("job %s refused: %v", job, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("job %s accepted, want %q", job, fmt.Sprintf(c.want, job))
			}
			if got, want := err.Error(), fmt.Sprintf(c.want, job); got != want {
				t.Errorf("error\n got %s\nwant %s", got, want)
			}
			var re *shopdb.RowError
			if !errors.As(err, &re) || re.Kind != shopdb.RowBounds {
				t.Errorf("error is not a *RowError of kind %q: %#v", shopdb.RowBounds, err)
			}
			if got := badRaised[job] == nil; got != c.raised {
				t.Errorf("with raised bounds: valid = %v, want %v (%v)", got, c.raised, badRaised[job])
			}
		})
	}
}

// TestLimitsValidate: a bound that makes no sense is refused with its key.
func TestLimitsValidate(t *testing.T) {
	for _, c := range []struct {
		l    shopdb.Limits
		want string
	}{
		{shopdb.Limits{MaxQuantity: decimal.NewFromInt(-1)}, "shop.limits.max_quantity: -1 must be positive (or 0 for the default 100000)"},
		{shopdb.Limits{MaxPrice: decimal.NewFromInt(-1)}, "shop.limits.max_price: -1 must be positive (or 0 for the default 10000000)"},
		{shopdb.Limits{MaxDigits: 39}, "shop.limits.max_digits: 39 must be between 1 and 38 (or 0 for the default 15)"},
	} {
		cfg := validConfig()
		cfg.Limits = c.l
		if err := cfg.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("Validate(%+v) = %v, want %q", c.l, err, c.want)
		}
	}
}

// FuzzAppendAmount: AppendAmount writes what decimal's String writes, the
// text a quote's hash is made of, for any amount: those a shop returns,
// the totals quotesync computes, and random ones of every exponent.
func FuzzAppendAmount(f *testing.F) {
	for _, s := range []string{"0", "-0.00", "95.5000", "0012.340", "-1.5", "1e30", "0.0001", "1e3", "-5e-2", "1200",
		".5", "-0.05", "99999.9999", "1e-70", "123456789012345678", "1234567890123456789", "9223372036854775807",
		"-9223372036854775808", "-9223372036854775809", "5e64", "5e65", "5e-64", "5e-65"} {
		f.Add(s)
	}
	check := func(t testing.TB, d decimal.Decimal) {
		if got, want := string(shopdb.AppendAmount([]byte("x"), d)), "x"+d.String(); got != want {
			t.Fatalf("AppendAmount(%s) = %q, want %q", d, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		d := decimal.New(r.Int64N(1<<62)-1<<61, int32(r.IntN(80)-40))
		check(f, d)
		check(f, d.Mul(decimal.New(r.Int64N(2000), -3)).Round(2))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := decimal.NewFromString(s); err == nil {
			check(t, d)
		}
	})
}
