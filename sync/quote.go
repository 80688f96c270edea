package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	gosync "sync"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// buildQuote builds the Draft quote of a job from its validated lines and
// its quote-level fields (shop.queries.quote_fields; nil when none), sent
// as JSON strings.
func (e *Engine) buildQuote(job string, lines []shopdb.Line, fields map[string]string) remote.Quote {
	return buildQuote(e.cfg.Quote, job, lines, fields)
}

// buildQuote is the quote of a job as cfg shapes it: what a pass pushes,
// and what `quotesync preview` shows.
func buildQuote(cfg QuoteConfig, job string, lines []shopdb.Line, fields map[string]string) remote.Quote {
	q := remote.Quote{Type: cfg.Type, Status: remote.StatusDraft}
	for name, v := range fields {
		if q.Extra == nil {
			q.Extra = make(map[string]json.RawMessage, len(fields))
		}
		q.Extra[name], _ = json.Marshal(v) // a string always marshals
	}
	if !cfg.OmitReferenceID {
		q.ReferenceID = job
	}
	for _, t := range slices.Sorted(maps.Keys(cfg.Rates)) {
		q.Rates = append(q.Rates, remote.Rate{Type: t, Rate: cfg.Rates[t]})
	}
	q.Items = make([]remote.Item, 0, len(lines))
	for _, l := range lines {
		q.Items = append(q.Items, lineItem(l))
	}
	return q
}

// lineItem is the quote item of a line.
func lineItem(l shopdb.Line) remote.Item {
	return remote.Item{
		ID:          l.LineID,
		Order:       l.Order,
		Type:        l.WorkType,
		Description: l.Description,
		Quantity:    l.Quantity,
		Price:       l.Price,
		Total:       l.Total,
		PartNumber:  l.PartNumber,
		Markup:      l.Markup,
		IsOnReport:  l.OnReport,
		Metadata:    l.Metadata,
	}
}

// hashQuote returns the SHA-256 of a canonical form of the quote: every
// field that is pushed, in a fixed order, with decimals in their shortest
// exact form (95.5000 and 95.5 are the same amount). Two quotes hash alike
// exactly when pushing one over the other changes nothing.
func hashQuote(q remote.Quote) string {
	return canonHash(q, len(q.Items), func(i int) remote.Item { return q.Items[i] })
}

// hashLines is hashQuote(buildQuote(cfg, job, lines, fields)), the same
// bytes hashed, without the quote's items: a pass hashes the lines of
// every job whose marker moved and builds the quote of the few it pushes
// (BenchmarkIdlePass10k, case marker-moved).
func hashLines(cfg QuoteConfig, job string, lines []shopdb.Line, fields map[string]string) string {
	return canonHash(buildQuote(cfg, job, nil, fields), len(lines), func(i int) remote.Item { return lineItem(lines[i]) })
}

// canonHash hashes q with its n items item(0) … item(n-1), whatever
// q.Items holds.
func canonHash(q remote.Quote, n int, item func(i int) remote.Item) string {
	w := canonWriters.Get().(*canonWriter)
	defer canonWriters.Put(w)
	w.buf = w.buf[:0]
	w.str(q.Type)
	w.str(q.Status)
	w.str(q.ReferenceID)
	w.int(len(q.Rates))
	for _, r := range q.Rates {
		w.str(r.Type)
		w.dec(r.Rate)
	}
	w.int(n)
	for i := range n {
		w.item(item(i))
	}
	w.int(len(q.Extra))
	for _, k := range slices.Sorted(maps.Keys(q.Extra)) {
		w.str(k)
		w.bytes(q.Extra[k])
	}
	s := sha256.Sum256(w.buf)
	return hex.EncodeToString(s[:])
}

// canonWriters are the buffers of canonHash: a pass hashes a quote for
// every job whose marker moved.
var canonWriters = gosync.Pool{New: func() any { return &canonWriter{} }}

// item writes one item.
func (c *canonWriter) item(it remote.Item) {
	c.str(it.ID)
	c.int(it.Order)
	c.str(it.Type)
	c.str(it.Description)
	c.dec(it.Quantity)
	c.dec(it.Price)
	c.dec(it.Total)
	c.str(it.PartNumber)
	if it.Markup != nil {
		c.str("markup")
		c.dec(*it.Markup)
	}
	if it.IsOnReport != nil {
		c.str("onreport")
		c.str(strconv.FormatBool(*it.IsOnReport))
	}
	c.int(len(it.Metadata))
	if len(it.Metadata) > 0 {
		for _, k := range slices.Sorted(maps.Keys(it.Metadata)) {
			c.str(k)
			c.str(it.Metadata[k])
		}
	}
}

// canonWriter appends length-prefixed fields to one buffer (hashed at
// once), so that no two different quotes produce the same byte stream.
// The stream is what pushed hashes stored by earlier versions were made
// of: changing it would re-push every Draft once.
type canonWriter struct{ buf, amount []byte }

func (c *canonWriter) str(s string) {
	c.buf = strconv.AppendInt(c.buf, int64(len(s)), 10)
	c.buf = append(c.buf, ':')
	c.buf = append(c.buf, s...)
}

func (c *canonWriter) int(n int) {
	var tmp [20]byte
	c.bytes(strconv.AppendInt(tmp[:0], int64(n), 10))
}

func (c *canonWriter) bytes(b []byte) {
	c.buf = strconv.AppendInt(c.buf, int64(len(b)), 10)
	c.buf = append(c.buf, ':')
	c.buf = append(c.buf, b...)
}

// dec writes d as decimal's String: its shortest exact form ("95.5000"
// is "95.5").
func (c *canonWriter) dec(d decimal.Decimal) {
	c.amount = shopdb.AppendAmount(c.amount[:0], d)
	c.bytes(c.amount)
}
