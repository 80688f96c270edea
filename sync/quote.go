package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sort"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// buildQuote builds the Draft quote of a job from its validated lines.
func (e *Engine) buildQuote(job string, lines []shopdb.Line) remote.Quote {
	q := remote.Quote{Type: e.cfg.Quote.Type, Status: remote.StatusDraft}
	if !e.cfg.Quote.OmitReferenceID {
		q.ReferenceID = job
	}
	types := make([]string, 0, len(e.cfg.Quote.Rates))
	for t := range e.cfg.Quote.Rates {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		q.Rates = append(q.Rates, remote.Rate{Type: t, Rate: e.cfg.Quote.Rates[t]})
	}
	q.Items = make([]remote.Item, 0, len(lines))
	for _, l := range lines {
		q.Items = append(q.Items, remote.Item{
			ID:          l.LineID,
			Order:       l.Order,
			Type:        l.WorkType,
			Description: l.Description,
			Quantity:    l.Quantity,
			Price:       l.Price,
			Total:       l.Total,
			PartNumber:  l.PartNumber,
		})
	}
	return q
}

// hashQuote returns the SHA-256 of a canonical form of the quote: every
// field that is pushed, in a fixed order, with decimals in their shortest
// exact form (95.5000 and 95.5 are the same amount). Two quotes hash alike
// exactly when pushing one over the other changes nothing.
func hashQuote(q remote.Quote) string {
	h := sha256.New()
	w := canonWriter{w: h}
	w.str(q.Type)
	w.str(q.Status)
	w.str(q.ReferenceID)
	w.int(len(q.Rates))
	for _, r := range q.Rates {
		w.str(r.Type)
		w.dec(r.Rate)
	}
	w.int(len(q.Items))
	for _, it := range q.Items {
		w.str(it.ID)
		w.int(it.Order)
		w.str(it.Type)
		w.str(it.Description)
		w.dec(it.Quantity)
		w.dec(it.Price)
		w.dec(it.Total)
		w.str(it.PartNumber)
		if it.Markup != nil {
			w.str("markup")
			w.dec(*it.Markup)
		}
		if it.IsOnReport != nil {
			w.str("onreport")
			w.str(strconv.FormatBool(*it.IsOnReport))
		}
		keys := make([]string, 0, len(it.Metadata))
		for k := range it.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.int(len(keys))
		for _, k := range keys {
			w.str(k)
			w.str(it.Metadata[k])
		}
	}
	extra := make([]string, 0, len(q.Extra))
	for k := range q.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	w.int(len(extra))
	for _, k := range extra {
		w.str(k)
		w.str(string(q.Extra[k]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonWriter writes length-prefixed fields, so that no two different
// quotes produce the same byte stream.
type canonWriter struct{ w io.Writer }

func (c canonWriter) str(s string) {
	_, _ = io.WriteString(c.w, strconv.Itoa(len(s)))
	_, _ = io.WriteString(c.w, ":")
	_, _ = io.WriteString(c.w, s)
}

func (c canonWriter) int(n int) { c.str(strconv.Itoa(n)) }

func (c canonWriter) dec(d decimal.Decimal) { c.str(d.String()) }
