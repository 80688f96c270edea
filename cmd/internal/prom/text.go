package prom

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// ContentType is the media type of the text format, as Prometheus's client
// sends it.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// WriteText writes families in the text format.
func WriteText(w io.Writer, fams []Family) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for _, f := range fams {
		buf = buf[:0]
		buf = append(buf, "# HELP "...)
		buf = append(buf, f.Name...)
		buf = append(buf, ' ')
		buf = appendEscaped(buf, f.Help, false)
		buf = append(buf, "\n# TYPE "...)
		buf = append(buf, f.Name...)
		buf = append(buf, ' ')
		buf = append(buf, f.Type...)
		buf = append(buf, '\n')
		for _, s := range f.Series {
			switch f.Type {
			case TypeHistogram:
				for i, b := range s.Bounds {
					buf = appendSample(buf, f.Name, "_bucket", s.Labels, "le", formatFloat(b))
					buf = strconv.AppendUint(buf, s.Buckets[i], 10)
					buf = append(buf, '\n')
				}
				buf = appendSample(buf, f.Name, "_bucket", s.Labels, "le", "+Inf")
				buf = strconv.AppendUint(buf, s.Count, 10)
				buf = append(buf, '\n')
				buf = appendSumCount(buf, f.Name, s)
			case TypeSummary:
				for _, q := range s.Quantiles {
					buf = appendSample(buf, f.Name, "", s.Labels, "quantile", formatFloat(q.Q))
					buf = append(buf, formatFloat(q.Value)...)
					buf = append(buf, '\n')
				}
				buf = appendSumCount(buf, f.Name, s)
			default:
				buf = appendSample(buf, f.Name, "", s.Labels, "", "")
				buf = append(buf, formatFloat(s.Value)...)
				buf = append(buf, '\n')
			}
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendSumCount(buf []byte, name string, s Series) []byte {
	buf = appendSample(buf, name, "_sum", s.Labels, "", "")
	buf = append(buf, formatFloat(s.Sum)...)
	buf = append(buf, '\n')
	buf = appendSample(buf, name, "_count", s.Labels, "", "")
	buf = strconv.AppendUint(buf, s.Count, 10)
	return append(buf, '\n')
}

// appendSample appends a sample's name and labels (and one more label,
// extra, when not empty), up to its value.
func appendSample(buf []byte, name, suffix string, labels []Label, extra, extraValue string) []byte {
	buf = append(buf, name...)
	buf = append(buf, suffix...)
	if len(labels) > 0 || extra != "" {
		buf = append(buf, '{')
		for i, l := range labels {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendLabel(buf, l.Name, l.Value)
		}
		if extra != "" {
			if len(labels) > 0 {
				buf = append(buf, ',')
			}
			buf = appendLabel(buf, extra, extraValue)
		}
		buf = append(buf, '}')
	}
	return append(buf, ' ')
}

func appendLabel(buf []byte, name, v string) []byte {
	buf = append(buf, name...)
	buf = append(buf, `="`...)
	buf = appendEscaped(buf, v, true)
	return append(buf, '"')
}

// appendEscaped escapes a backslash and a line feed, and in a label value
// a double quote too.
func appendEscaped(buf []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			buf = append(buf, `\\`...)
		case c == '\n':
			buf = append(buf, `\n`...)
		case c == '"' && quote:
			buf = append(buf, `\"`...)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// formatFloat writes a value as Prometheus's client does.
func formatFloat(f float64) string {
	switch {
	case f == 0:
		return "0" // and not -0
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Handler serves the registry's families in the text format, gzipped when
// the client accepts it; name[] parameters, when given, choose the
// families by name.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fams := r.Gather()
		if names := req.URL.Query()["name[]"]; len(names) > 0 {
			keep := fams[:0]
			for _, f := range fams {
				for _, n := range names {
					if f.Name == n {
						keep = append(keep, f)
						break
					}
				}
			}
			fams = keep
		}
		h := w.Header()
		h.Add("Vary", "Accept")
		h.Add("Vary", "Accept-Encoding")
		h.Set("Content-Type", ContentType)
		var out io.Writer = w
		if acceptsGzip(req.Header.Values("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		if err := WriteText(out, fams); err != nil {
			r.handlerErrors.WithLabelValues("encoding").Inc()
		}
	})
}

// acceptsGzip reports whether Accept-Encoding prefers gzip to identity, as
// Prometheus's client decides it: the first of identity and gzip with the
// highest q above 0.
func acceptsGzip(headers []string) bool {
	best, bestQ := "identity", -1.0
	for _, offer := range []string{"identity", "gzip"} {
		for _, h := range headers {
			for spec := range strings.SplitSeq(h, ",") {
				coding, params, _ := strings.Cut(spec, ";")
				coding = strings.ToLower(strings.TrimSpace(coding))
				q := 1.0
				if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
					var err error
					if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
						continue
					}
				}
				if q > bestQ && (coding == "*" || coding == offer) {
					best, bestQ = offer, q
				}
			}
		}
	}
	return best == "gzip" && bestQ > 0
}
