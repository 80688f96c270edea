package shopdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// The kinds of shop.write_back: one optional statement for each.
const (
	WriteBackAccepted         = "accepted"          // the remote confirmed our accept
	WriteBackDraftPushed      = "draft_pushed"      // a Draft was pushed (first or again)
	WriteBackSubmitted        = "submitted"         // the quote is Submitted
	WriteBackRejected         = "rejected"          // the remote refused for good
	WriteBackTakenElsewhere   = "taken_elsewhere"   // someone else accepted the request
	WriteBackSupplementNeeded = "supplement_needed" // the lines changed after submission
	WriteBackGone             = "gone"              // expired or declined before our accept landed
	WriteBackRetried          = "retried"           // a person put the request back into the flow (quotesync retry)
)

// WriteBackKinds lists the keys shop.write_back takes, in workflow order.
func WriteBackKinds() []string {
	return []string{WriteBackAccepted, WriteBackDraftPushed, WriteBackSubmitted, WriteBackRejected,
		WriteBackTakenElsewhere, WriteBackSupplementNeeded, WriteBackGone, WriteBackRetried}
}

// Parameters of the write-back statements (ParamJob is :job).
const (
	ParamRequest = "request"
	ParamClaim   = "claim"
	ParamStatus  = "status"
	ParamReason  = "reason"
	ParamTime    = "time"
)

// writeBackParams are the parameters a write-back statement may use.
var writeBackParams = []string{ParamJob, ParamRequest, ParamClaim, ParamStatus, ParamReason, ParamTime, ParamInsurer}

// WriteBackParams are the values of a write-back statement's parameters.
type WriteBackParams struct {
	Insurer string    // :insurer, the request's insurer
	Job     string    // :job, "" when the request never had one
	Request string    // :request
	Claim   string    // :claim
	Status  string    // :status, the kind ("submitted", …)
	Reason  string    // :reason, the reason in words and its details, "" when none
	Time    time.Time // :time, when the event happened (UTC)
}

func (p WriteBackParams) vals() map[string]any {
	return map[string]any{ParamInsurer: p.Insurer, ParamJob: p.Job, ParamRequest: p.Request, ParamClaim: p.Claim,
		ParamStatus: p.Status, ParamReason: p.Reason, ParamTime: normTime(p.Time)}
}

// compileWriteBack checks shop.write_back: known kinds, named statements
// using only the write-back parameters.
func compileWriteBack(m map[string]string) (map[string]namedQuery, error) {
	out := make(map[string]namedQuery, len(m))
	kinds := WriteBackKinds()
	for _, k := range sortedKeys(m) {
		if !slices.Contains(kinds, k) {
			return nil, fmt.Errorf("shop.write_back.%s: not an event kind; use one of %s", k, strings.Join(kinds, ", "))
		}
		if strings.TrimSpace(m[k]) == "" {
			continue // an empty entry is no statement
		}
		nq, err := compileNamed("shop.write_back."+k, m[k], writeBackParams)
		if err != nil {
			return nil, err
		}
		out[k] = nq
	}
	return out, nil
}

// HasWriteBack reports whether shop.write_back has a statement for kind.
func (db *DB) HasWriteBack(kind string) bool {
	_, ok := db.q.writeBack[kind]
	return ok
}

// WriteBack runs the write-back statement of kind with p on tx: the
// transaction in which quotesync's store marks the delivery done
// (store.Deliver), so that it runs once for the event, or not at all. A
// kind whose statement was removed from the mapping since the event runs
// nothing. The caller bounds its time (shop.query_timeout).
func (db *DB) WriteBack(ctx context.Context, tx *sqlx.Tx, kind string, p WriteBackParams) error {
	q, ok := db.q.writeBack[kind]
	if !ok {
		return nil
	}
	return q.exec(ctx, tx, p.vals())
}

// CheckWriteBack has the server prepare every write-back statement (which
// resolves its tables and columns) and EXPLAIN it with placeholder values
// (which plans it, names included, without running it): nothing is
// written. One that writes a table ignoring transactions is warned about.
func (db *DB) CheckWriteBack(ctx context.Context) []QueryCheck {
	p := WriteBackParams{Insurer: probe, Job: probe, Request: probe, Claim: probe, Status: WriteBackSubmitted,
		Reason: probe, Time: time.Now()}
	var out []QueryCheck
	for _, k := range WriteBackKinds() {
		q, ok := db.q.writeBack[k]
		if !ok {
			continue
		}
		c := db.checkQuery(ctx, &q, p.vals(), nil)
		if c.Err == nil {
			c.Err, c.Note = db.explain(ctx, &q, p.vals()), "prepared; EXPLAIN resolved its tables and columns; not run"
		}
		db.warnNonTransactional(ctx, &c, q.text, nonTxWriteBack)
		out = append(out, c)
	}
	return out
}

// explain has the server EXPLAIN q with vals: an error names what it
// cannot resolve.
func (db *DB) explain(ctx context.Context, q *namedQuery, vals map[string]any) error {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	text, args, err := q.bind(vals)
	if err != nil {
		return err
	}
	rows, err := db.x.QueryContext(ctx, "EXPLAIN "+text, args...)
	if err != nil {
		return fmt.Errorf("EXPLAIN %s: %w", q.key, explainPrivilege(err, db.cfg))
	}
	return rows.Close()
}
