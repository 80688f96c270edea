package shopdb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jmoiron/sqlx"
)

// Built-in parameter names of the mapping queries (see Queries).
const (
	ParamRequestID   = "request_id"
	ParamClaimNumber = "claim_number"
	ParamExpiry      = "expiry"
	ParamJob         = "job"
	ParamJobs        = "jobs"
	ParamJobCreated  = "job_created"
	// ParamInsurer is the name of the insurer whose request (or job) a
	// statement runs for: available to find_job, create_job,
	// booking_date, release_job, quote_fields and every write_back
	// statement, required by none.
	ParamInsurer = "insurer"
)

// builtinParams are the built-in parameter names, which shop.params may
// not take.
var builtinParams = []string{ParamRequestID, ParamClaimNumber, ParamExpiry, ParamJob, ParamJobs, ParamJobCreated, ParamInsurer}

// namedQuery is one validated mapping query.
type namedQuery struct {
	key      string // YAML key, e.g. "shop.queries.create_job[1]"
	text     string // the integrator's SQL with :name parameters
	names    []string
	usesJobs bool
	// usesInsurer: the statement uses :insurer; insurer: it may (it runs
	// for one insurer's request or job).
	usesInsurer, insurer bool
}

// queries is the compiled mapping.
type queries struct {
	findJob       *namedQuery
	createJob     []namedQuery
	bookingDate   *namedQuery
	releaseJob    []namedQuery
	lineItems     namedQuery
	estimateState namedQuery
	shopChanged   *namedQuery
	quoteFields   *namedQuery
	sampleJobs    *namedQuery
	writeBack     map[string]namedQuery // shop.write_back, by kind
}

// compileQueries checks every mapping query of c: present where required,
// parseable as a named query, and using only the parameters it may use.
func compileQueries(c Config) (queries, error) {
	var qs queries
	reqParams := []string{ParamRequestID, ParamClaimNumber, ParamExpiry}
	reqParams = append(reqParams, sortedKeys(c.Params)...)
	reqParams = append(reqParams, ParamInsurer)
	q := c.Queries
	if strings.TrimSpace(q.FindJob) == "" && len(q.CreateJob) == 0 {
		return qs, fmt.Errorf("shop.queries: set find_job, create_job or both, so that a request can get a job")
	}
	// optional compiles an optional statement: nil when it is not set.
	optional := func(name, text string, params []string) (*namedQuery, error) {
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
		nq, err := compileNamed("shop.queries."+name, text, params)
		return &nq, err
	}
	var err error
	if qs.findJob, err = optional("find_job", q.FindJob, reqParams); err != nil {
		return qs, err
	}
	if qs.createJob, err = compileEach("create_job", q.CreateJob, reqParams); err != nil {
		return qs, err
	}
	if qs.bookingDate, err = optional("booking_date", q.BookingDate, append([]string{ParamJob}, reqParams...)); err != nil {
		return qs, err
	}
	if qs.releaseJob, err = compileEach("release_job", q.ReleaseJob, append([]string{ParamJob, ParamJobCreated}, reqParams...)); err != nil {
		return qs, err
	}
	if qs.lineItems, err = compileJobsQuery("shop.queries.line_items", q.LineItems); err != nil {
		return qs, err
	}
	if qs.estimateState, err = compileJobsQuery("shop.queries.estimate_state", q.EstimateState); err != nil {
		return qs, err
	}
	if qs.shopChanged, err = optional("shop_changed", q.ShopChanged, nil); err != nil {
		return qs, err
	}
	if strings.TrimSpace(q.QuoteFields) != "" {
		nq, err := compileJobsQuery("shop.queries.quote_fields", q.QuoteFields, ParamInsurer)
		if err != nil {
			return qs, err
		}
		qs.quoteFields = &nq
	}
	if qs.sampleJobs, err = optional("sample_jobs", q.SampleJobs, nil); err != nil {
		return qs, err
	}
	if qs.writeBack, err = compileWriteBack(c.WriteBack); err != nil {
		return qs, err
	}
	return qs, nil
}

// compileEach compiles the statements of a list, each keyed by its index.
func compileEach(name string, texts []string, params []string) ([]namedQuery, error) {
	var out []namedQuery
	for i, text := range texts {
		nq, err := compileNamed(fmt.Sprintf("shop.queries.%s[%d]", name, i), text, params)
		if err != nil {
			return nil, err
		}
		out = append(out, nq)
	}
	return out, nil
}

func compileJobsQuery(key, text string, more ...string) (namedQuery, error) {
	if strings.TrimSpace(text) == "" {
		return namedQuery{}, fmt.Errorf("%s: required", key)
	}
	nq, err := compileNamed(key, text, append([]string{ParamJobs}, more...))
	if err != nil {
		return nq, err
	}
	if !nq.usesJobs {
		return nq, fmt.Errorf("%s: must use :jobs, e.g. WHERE j.job_no IN (:jobs)", key)
	}
	return nq, nil
}

func compileNamed(key, text string, allowed []string) (namedQuery, error) {
	nq := namedQuery{key: key, text: text}
	if strings.TrimSpace(text) == "" {
		return nq, fmt.Errorf("%s: empty statement", key)
	}
	bound, names, err := scanNamed(text)
	if err != nil {
		return nq, fmt.Errorf("%s: %w", key, err)
	}
	if strings.Count(bound, "?") != len(names) {
		return nq, fmt.Errorf("%s: contains a literal \"?\"; write CHAR(63) instead (parameters are :name)", key)
	}
	nq.insurer = slices.Contains(allowed, ParamInsurer)
	vals := make(map[string]any, len(names))
	for _, n := range names {
		if !slices.Contains(allowed, n) {
			return nq, fmt.Errorf("%s: unknown parameter :%s; known here: :%s (add others under shop.params)", key, n, strings.Join(allowed, ", :"))
		}
		vals[n] = nil
		nq.usesJobs = nq.usesJobs || n == ParamJobs
		nq.usesInsurer = nq.usesInsurer || n == ParamInsurer
		if !slices.Contains(nq.names, n) {
			nq.names = append(nq.names, n)
		}
	}
	// sqlx is the binder at run time: make sure it reads the text as we do.
	if _, args, err := sqlx.Named(text, vals); err != nil || len(args) != len(names) {
		return nq, fmt.Errorf("%s: not a valid named query: %v", key, err)
	}
	return nq, nil
}

// scanNamed finds the :name parameters of a named query as sqlx does ("::"
// is a literal colon, ":=" an assignment) and returns the text with "?" in
// their place.
func scanNamed(text string) (string, []string, error) {
	var out strings.Builder
	var names []string
	isNameByte := func(b byte) bool {
		return b == '_' || b == '.' || unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b))
	}
	for i := 0; i < len(text); i++ {
		b := text[i]
		if b != ':' {
			out.WriteByte(b)
			continue
		}
		switch {
		case i+1 < len(text) && text[i+1] == ':':
			out.WriteByte(':')
			i++
		case i+1 < len(text) && text[i+1] == '=':
			out.WriteString(":=")
			i++
		default:
			j := i + 1
			for j < len(text) && isNameByte(text[j]) {
				j++
			}
			if j == i+1 {
				return "", nil, fmt.Errorf("\":\" at offset %d starts no parameter name; write \"::\" for a literal colon", i)
			}
			names = append(names, text[i+1:j])
			out.WriteByte('?')
			i = j - 1
		}
	}
	return out.String(), names, nil
}

// queryer is what the mapping runs on: the pool or a transaction.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// bind turns q and the parameter values into SQL and arguments.
func (q *namedQuery) bind(vals map[string]any) (string, []any, error) {
	text, args, err := sqlx.Named(q.text, vals)
	if err != nil {
		return "", nil, fmt.Errorf("bind %s: %w", q.key, err)
	}
	if q.usesJobs {
		if text, args, err = sqlx.In(text, args...); err != nil {
			return "", nil, fmt.Errorf("expand :jobs of %s: %w", q.key, err)
		}
	}
	return text, args, nil
}

func (q *namedQuery) query(ctx context.Context, x queryer, vals map[string]any) (*sql.Rows, error) {
	text, args, err := q.bind(vals)
	if err != nil {
		return nil, err
	}
	rows, err := x.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", q.key, err)
	}
	return rows, nil
}

// queryColumns is query with the names of the result's columns; the rows
// are closed when err is not nil.
func (q *namedQuery) queryColumns(ctx context.Context, x queryer, vals map[string]any) (*sql.Rows, []string, error) {
	rows, err := q.query(ctx, x, vals)
	if err != nil {
		return nil, nil, err
	}
	names, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, nil, fmt.Errorf("read columns of %s: %w", q.key, err)
	}
	return rows, names, nil
}

func (q *namedQuery) exec(ctx context.Context, x queryer, vals map[string]any) error {
	text, args, err := q.bind(vals)
	if err != nil {
		return err
	}
	if _, err := x.ExecContext(ctx, text, args...); err != nil {
		return fmt.Errorf("run %s: %w", q.key, err)
	}
	return nil
}

// requestParams are the parameter values for one request of insurer:
// the built-ins and every configured JSON path (NULL where the request
// has no value).
func requestParams(insurer string, nr NewRequest, params map[string]string) (map[string]any, error) {
	vals := map[string]any{
		ParamRequestID:   nr.RequestID,
		ParamClaimNumber: nr.ClaimNumber,
		ParamExpiry:      nil,
		ParamInsurer:     insurer,
	}
	if !nr.Expiry.IsZero() {
		vals[ParamExpiry] = nr.Expiry.UTC()
	}
	if len(params) == 0 {
		return vals, nil
	}
	var doc any
	if len(bytes.TrimSpace(nr.RequestJSON)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(nr.RequestJSON))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("decode JSON of request %s: %w", nr.RequestID, err)
		}
	}
	for name, path := range params {
		vals[name] = jsonPath(doc, path)
	}
	return vals, nil
}

// jsonPath follows a dotted path (object keys, or array indexes) into doc
// and returns a value for SQL: a string, a bool, nil, or compact JSON for
// an object or array.
func jsonPath(doc any, path string) any {
	cur := doc
	for _, seg := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	switch v := cur.(type) {
	case nil, string, bool:
		return v
	case json.Number:
		return v.String()
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		return string(b)
	}
}

// scanJob reads the job column of a find_job or create_job result: zero
// rows is "", more than one is an error.
func scanJob(rows *sql.Rows, key string) (string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", fmt.Errorf("read columns of %s: %w", key, err)
	}
	idx, err := jobColumn(cols, key)
	if err != nil {
		return "", err
	}
	var jobs []string
	if err := scanRows(rows, key, func(vals []any) error {
		s, ok := text(vals[idx])
		if !ok || strings.TrimSpace(s) == "" {
			return fmt.Errorf("%s returned a NULL or empty job", key)
		}
		jobs = append(jobs, s)
		return nil
	}); err != nil {
		return "", err
	}
	switch len(jobs) {
	case 0:
		return "", nil
	case 1:
		return jobs[0], nil
	default:
		return "", fmt.Errorf("%s returned %d rows (jobs %s); it must return at most one", key, len(jobs), strings.Join(jobs, ", "))
	}
}

// jobColumn is the index of the job column: the only column, or the one
// named "job".
func jobColumn(cols []string, key string) (int, error) {
	if len(cols) == 1 {
		return 0, nil
	}
	for i, c := range cols {
		if strings.EqualFold(c, "job") {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s returns columns %s; it needs one column named job", key, strings.Join(cols, ", "))
}

// scanDate reads booking_date's single value: a DATE/DATETIME, or text in
// "YYYY-MM-DD[ hh:mm:ss]" form. No row or NULL is the zero time.
func scanDate(rows *sql.Rows, key string) (time.Time, error) {
	defer rows.Close()
	var v any
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return time.Time{}, fmt.Errorf("read %s: %w (it must return one column)", key, err)
		}
	}
	if err := rows.Err(); err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", key, err)
	}
	switch t := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return t.UTC(), nil
	}
	s, _ := text(v)
	for _, layout := range []string{time.DateOnly, time.DateTime, time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s returned %q, which is not a date", key, s)
}

// text renders a scanned value as text; false for NULL.
func text(v any) (string, bool) {
	switch t := v.(type) {
	case nil:
		return "", false
	case []byte:
		return string(t), true
	case string:
		return t, true
	case int64:
		return strconv.FormatInt(t, 10), true
	case uint64:
		return strconv.FormatUint(t, 10), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32), true
	case bool:
		if t {
			return "1", true
		}
		return "0", true
	case time.Time:
		return t.UTC().Format("2006-01-02 15:04:05.999999"), true
	default:
		return fmt.Sprint(t), true
	}
}

// WithoutInsurer returns the keys of the statements that may use :insurer
// (ParamInsurer) and do not: with several insurers they run alike for every
// insurer's requests, which is right when the shop does not tell its
// insurers apart there.
func (db *DB) WithoutInsurer() []string {
	var out []string
	add := func(q *namedQuery) {
		if q != nil && q.insurer && !q.usesInsurer {
			out = append(out, q.key)
		}
	}
	add(db.q.findJob)
	for i := range db.q.createJob {
		add(&db.q.createJob[i])
	}
	add(db.q.bookingDate)
	for i := range db.q.releaseJob {
		add(&db.q.releaseJob[i])
	}
	add(db.q.quoteFields)
	for _, k := range WriteBackKinds() {
		if q, ok := db.q.writeBack[k]; ok {
			add(&q)
		}
	}
	return out
}
