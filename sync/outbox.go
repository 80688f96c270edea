package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// OutboxStore is quotesync's outbox as the deliverer uses it;
// *store.Store implements it.
type OutboxStore interface {
	PendingDeliveries(ctx context.Context, limit int) ([]store.Delivery, error)
	Deliver(ctx context.Context, id int64, do func(ctx context.Context, tx *sqlx.Tx) error) error
	DeliveryFailed(ctx context.Context, id int64, cause string, next time.Time) error
	ReleaseOnce(ctx context.Context, key string) error
}

// WriteBacks are the mapping's write-back statements as the deliverer
// runs them, each in the transaction that marks its delivery done;
// *shopdb.DB implements them. Config's QueryTimeout bounds that
// transaction.
type WriteBacks interface {
	HasWriteBack(kind string) bool
	WriteBack(ctx context.Context, tx *sqlx.Tx, kind string, p shopdb.WriteBackParams) error
	Config() shopdb.Config
}

// Log messages of deliveries; docs/logs.md explains each.
const (
	msgDeliveryFailed    = "delivery failed; will retry"
	msgDeliveryRecovered = "delivered after failed attempts"
	msgDelivered         = "delivered"
	msgOutboxFailed      = "outbox not worked; tried again later"
)

// Log field keys of deliveries.
const (
	fieldTarget = "target"
	fieldNotice = "notice"
)

// deliverySlack is what a notification's transaction may take beyond the
// notifier's own timeout (a command's group ending, locking and marking
// its row).
const deliverySlack = 30 * time.Second

// outboxBatch is how many deliveries one read of the outbox takes.
const outboxBatch = 100

// reasonMax caps :reason for a shop's column (a VARCHAR(255) that a
// longer text would make the statement fail, again and again).
const reasonMax = 250

// Outbox delivers what events queue in quotesync's outbox table: the
// mapping's write-back statements and the notifications. The rows are
// written with the event, in its transaction (Engine.stored); Outbox
// works them after it, so a delivery never blocks a pass, and retries a
// failed one after Config.RetryBackoff. A write-back runs in one
// transaction with the mark that it ran; a notification is marked right
// after its receiver accepted it.
//
// It is an Observer: an event that queued a delivery wakes it, and the
// passes' outcomes drive the once-per-episode notice of a refused token.
type Outbox struct {
	store   OutboxStore
	shop    WriteBacks
	log     *zap.Logger
	cfg     NotifyConfig
	retry   remote.Backoff
	targets map[string]notifier
	to      []string        // the notifiers' targets, webhook first
	notify  map[string]bool // the notices the notifiers send
	// record records a notice through the executor of its insurer's
	// engine (Daemon.commitNotice; set when the daemon is assembled):
	// until it is set, no notice is recorded.
	record func(ctx context.Context, ev Event, out *store.Outbox) (bool, error)

	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Rand is the source of chance: the spread of a failed delivery's
	// backoff, a number in [0, 1). Default math/rand/v2's Float64. The
	// daemon gives the outbox its engine's Now and Rand.
	Rand func() float64

	kick    chan struct{}
	active  atomic.Bool // this instance leads (or runs alone)
	started atomic.Bool // Work ran once

	mu       gosync.Mutex
	auth     map[string]authEpisode // by insurer
	expiring []notice               // notices to record
	noticed  map[string]bool        // requests whose expiry was noticed (or found noticed), by onceKey
}

// authEpisode is how one insurer's token stands, for the auth_failing
// notice.
type authEpisode struct {
	fail bool // the last pass found the token refused
	open int  // the durable episode: 0 unknown, 1 open, -1 closed
}

// onceKey is the once key of a notice of kind for one insurer (and one
// request, when id is set). The lone insurer of the days before insurers
// keeps the keys it had then, so that a notice recorded before an
// upgrade is not recorded again; an insurer name holds no ":" or "@".
func onceKey(kind, insurer, id string) string {
	k := kind
	if insurer != DefaultInsurer {
		k += "@" + insurer
	}
	if id != "" {
		k += ":" + id
	}
	return k
}

// NewOutbox returns the deliverer of st's outbox for the mapping's
// write-back statements (shop's) and the notifiers of cfg; retry is the
// wait before a failed delivery is tried again.
func NewOutbox(st OutboxStore, shop WriteBacks, cfg NotifyConfig, retry remote.Backoff, log *zap.Logger) (*Outbox, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	o := &Outbox{store: st, shop: shop, log: log, cfg: cfg, retry: retry,
		targets: make(map[string]notifier), notify: make(map[string]bool),
		Now: time.Now, Rand: rand.Float64, kick: make(chan struct{}, 1), noticed: make(map[string]bool),
		auth: make(map[string]authEpisode)}
	if cfg.Webhook.URL != "" {
		o.targets[store.TargetWebhook] = newWebhook(cfg.Webhook, cfg.Secrets)
		o.to = append(o.to, store.TargetWebhook)
	}
	if cfg.Command.Path != "" {
		o.targets[store.TargetCommand] = &command{cfg: cfg.Command, secrets: cfg.Secrets}
		o.to = append(o.to, store.TargetCommand)
	}
	if len(o.targets) > 0 {
		for _, k := range cfg.Events {
			o.notify[k] = true
		}
	}
	return o, nil
}

// configured reports whether a write-back statement or a notifier is
// configured; without either, `once` asks nothing of the outbox.
func (o *Outbox) configured() bool {
	return len(o.targets) > 0 || slices.ContainsFunc(shopdb.WriteBackKinds(), o.shop.HasWriteBack)
}

// outboxOf is what ev queues: nil when nothing.
func (o *Outbox) outboxOf(ev Event) *store.Outbox {
	if o == nil {
		return nil
	}
	kind, ok := noticeTable[ev.Kind]
	if !ok {
		return nil
	}
	var targets []string
	if o.shop.HasWriteBack(kind) {
		targets = append(targets, store.TargetWriteBack)
	}
	if o.notify[kind] {
		targets = append(targets, o.to...)
	}
	if len(targets) == 0 {
		return nil
	}
	return &store.Outbox{Kind: kind, Claim: ev.Claim, Targets: targets}
}

// Observe implements Observer: it wakes the deliverer when an event
// queued a delivery, follows the leadership, and watches the passes for
// a refused token.
func (o *Outbox) Observe(ev Event) {
	switch ev.Kind {
	case EventLeader:
		o.setActive(true)
	case EventStandby, EventLeaseLost:
		o.setActive(false)
	case EventPassDone:
		if !o.notify[NoticeAuthFailing] {
			return
		}
		o.mu.Lock()
		a := o.auth[ev.Insurer]
		fail, ok := errors.Is(ev.Err, ErrUnauthorized), ev.Err == nil
		changed := (fail && a.open != 1) || (ok && a.open != -1)
		if fail || ok {
			a.fail = fail
		}
		o.auth[ev.Insurer] = a
		o.mu.Unlock()
		if changed {
			o.wake()
		}
	default:
		if o.outboxOf(ev) != nil {
			o.wake()
		}
	}
}

func (o *Outbox) setActive(on bool) {
	o.active.Store(on)
	if on {
		o.wake()
	}
}

func (o *Outbox) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// startOutbox runs o beside Run's passes; active says whether it works
// before a leadership event (no lock: at once). The returned function
// stops it and waits.
func startOutbox(ctx context.Context, o *Outbox, active bool) func() {
	if o == nil {
		return func() {}
	}
	o.setActive(active)
	ctx, cancel := context.WithCancel(ctx)
	var done gosync.WaitGroup
	done.Go(func() { o.Run(ctx) })
	return func() {
		cancel()
		done.Wait()
		o.setActive(false)
	}
}

// watchExpiry queues the expiring notice of every row of insurer in rows
// that is not accepted yet (phase from phases) and expires within
// NotifyConfig.ExpiryWarning of now, once per request: a request noticed
// before costs nothing on later passes.
func (o *Outbox) watchExpiry(insurer string, now time.Time, rows []store.Request, phases map[string]store.Phase) {
	if o == nil || !o.notify[NoticeExpiring] || o.cfg.ExpiryWarning < 0 {
		return
	}
	var add []notice
	o.mu.Lock()
	for _, r := range rows {
		ph := phases[r.RequestID]
		key := onceKey(NoticeExpiring, insurer, r.RequestID)
		if (ph != PhaseWaiting && ph != PhaseReserved) || r.Expiry.IsZero() || o.noticed[key] ||
			!r.Expiry.After(now) || r.Expiry.Sub(now) > o.cfg.ExpiryWarning {
			continue
		}
		o.noticed[key] = true
		p, _ := phaseInfo(ph)
		detail := fmt.Sprintf("expires at %s (in %s); %s", r.Expiry.UTC().Format(time.RFC3339),
			r.Expiry.Sub(now).Round(time.Minute), p.Words)
		if r.Reason != ReasonNone {
			detail += ": " + Reason(r.Reason).Words
		}
		add = append(add, notice{
			ev: Event{Kind: EventExpiring, Insurer: insurer, Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber,
				From: ph, To: ph, Reason: r.Reason, Detail: detail, At: now},
			out: &store.Outbox{Kind: NoticeExpiring, Claim: r.ClaimNumber, OnceKey: key}})
	}
	o.expiring = append(o.expiring, add...)
	o.mu.Unlock()
	if len(add) > 0 {
		o.wake()
	}
}

// Run works the outbox until ctx ends: when woken, and when the next
// failed delivery is due again.
func (o *Outbox) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	o.wake() // deliveries an earlier run left
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.kick:
		case <-timer.C:
		}
		if !o.active.Load() {
			continue // a standby: the leader delivers
		}
		if next := o.Work(ctx); !next.IsZero() {
			timer.Reset(max(next.Sub(o.Now()), time.Second))
		}
	}
}

// Work records the pending notices and makes every delivery that is due;
// it returns when the first one not due yet is (zero when none is left).
// Run calls it while this instance leads; Daemon.Deliver after a
// command's change (once's pass, under the lock; retry).
//
// The first Work of an Outbox tries every delivery not made yet at once,
// due or not: a restart or a reload (which builds a new one) is when a
// fixed statement or receiver should be tried again.
func (o *Outbox) Work(ctx context.Context) time.Time {
	o.recordNotices(ctx)
	all := !o.started.Swap(true)
	var soonest time.Time
	later := func(t time.Time) {
		if soonest.IsZero() || t.Before(soonest) {
			soonest = t
		}
	}
	tried := make(map[int64]bool)
	for ctx.Err() == nil {
		ds, err := o.store.PendingDeliveries(ctx, outboxBatch)
		if err != nil {
			if ctx.Err() == nil {
				o.log.Warn(msgOutboxFailed, zap.Error(err))
			}
			later(o.Now().Add(o.retry.Initial))
			return soonest
		}
		for _, d := range ds {
			if tried[d.ID] || ctx.Err() != nil {
				return soonest // every delivery was tried once in this call
			}
			if !all && d.NextAttemptAt.After(o.Now()) {
				later(d.NextAttemptAt)
				return soonest
			}
			tried[d.ID] = true
			if next := o.deliver(ctx, d); !next.IsZero() {
				later(next)
			}
		}
		if len(ds) < outboxBatch {
			return soonest
		}
	}
	return soonest
}

// recordNotices writes the expiring and auth_failing notices found since
// the last call, each once (the outbox's once keys keep them so across
// restarts).
func (o *Outbox) recordNotices(ctx context.Context) {
	o.mu.Lock()
	pending := o.expiring
	o.expiring = nil
	auth := maps.Clone(o.auth)
	o.mu.Unlock()
	for i, n := range pending {
		n.out.Targets = o.to
		if !o.recordOnce(ctx, n) {
			o.mu.Lock()
			o.expiring = append(o.expiring, pending[i:]...) // tried again at the next wake
			o.mu.Unlock()
			break
		}
	}
	if !o.notify[NoticeAuthFailing] {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(auth)) {
		o.recordAuth(ctx, name, auth[name])
	}
}

// recordAuth opens the auth_failing episode of insurer when the token is
// refused and none is open, and closes it when the token works again.
func (o *Outbox) recordAuth(ctx context.Context, insurer string, a authEpisode) {
	key := onceKey(NoticeAuthFailing, insurer, "")
	open := 1
	switch {
	case a.fail && a.open != 1:
		n := notice{ev: Event{Kind: EventAuthFailing, Insurer: insurer, At: o.Now(),
			Detail: "the remote refused the token (401/403); every pass of this insurer stops until the token works"},
			out: &store.Outbox{Kind: NoticeAuthFailing, OnceKey: key, Targets: o.to}}
		if !o.recordOnce(ctx, n) {
			return
		}
	case !a.fail && a.open != -1:
		if err := o.store.ReleaseOnce(ctx, key); err != nil {
			o.log.Warn(msgOutboxFailed, zap.Error(err))
			return
		}
		open = -1
	default:
		return
	}
	o.mu.Lock()
	a = o.auth[insurer]
	a.open = open
	o.auth[insurer] = a
	o.mu.Unlock()
}

// notice is an event that is no change of a row, and the deliveries it
// queues once while out's once key is held.
type notice struct {
	ev  Event
	out *store.Outbox
}

// recordOnce records n through record; false when it could not be
// written (a database failure, logged) or cannot be yet.
func (o *Outbox) recordOnce(ctx context.Context, n notice) bool {
	if o.record == nil {
		return false
	}
	if _, err := o.record(ctx, n.ev, n.out); err != nil {
		if ctx.Err() == nil {
			o.log.Warn(msgOutboxFailed, zap.Error(err))
		}
		return false
	}
	return true
}

// deliver makes one delivery, or records why it failed and when it is
// tried again, and returns that time (zero when it was made). The first
// failure of a delivery is logged at warn level, the later ones at debug,
// and the success after failures at info.
func (o *Outbox) deliver(ctx context.Context, d store.Delivery) time.Time {
	start := o.Now()
	err := o.attempt(ctx, d)
	if errors.Is(err, store.ErrDelivered) {
		return time.Time{}
	}
	fields := []zap.Field{zap.String(fieldTarget, d.Target), zap.String(fieldNotice, d.Kind)}
	if d.Insurer != "" {
		fields = append(fields, zap.String(fieldInsurer, d.Insurer))
	}
	if d.RequestID != "" {
		fields = append(fields, zap.String(fieldRequest, boundText(o.cfg.Secrets, d.RequestID, 80)))
	}
	if d.Job != "" {
		fields = append(fields, zap.String(fieldJob, d.Job))
	}
	if err == nil {
		fields = append(fields, zap.Duration(fieldDuration, o.Now().Sub(start)))
		if d.Attempts > 0 {
			o.log.Info(msgDeliveryRecovered, append(fields, zap.Int(fieldAttempt, d.Attempts+1))...)
		} else {
			o.log.Debug(msgDelivered, fields...)
		}
		return time.Time{}
	}
	if ctx.Err() != nil {
		return time.Time{} // stopping: the delivery was rolled back and is made after the restart
	}
	next := o.Now().Add(o.retry.Delay(d.Attempts+1, 0, o.Rand()))
	fields = append(fields, zap.Int(fieldAttempt, d.Attempts+1), zap.Time(fieldNext, next),
		zap.String("error", boundText(o.cfg.Secrets, err.Error(), 2000)))
	if d.Attempts == 0 {
		o.log.Warn(msgDeliveryFailed, fields...)
	} else {
		o.log.Debug(msgDeliveryFailed, fields...)
	}
	if ferr := o.store.DeliveryFailed(ctx, d.ID, err.Error(), next); ferr != nil && ctx.Err() == nil {
		o.log.Warn(msgOutboxFailed, zap.Error(ferr))
		return o.Now().Add(o.retry.Initial)
	}
	return next
}

// attempt performs delivery d once.
func (o *Outbox) attempt(ctx context.Context, d store.Delivery) error {
	if d.Target == store.TargetWriteBack {
		// shop.query_timeout bounds the whole transaction.
		ctx, cancel := context.WithTimeout(ctx, o.shop.Config().QueryTimeout)
		defer cancel()
		return o.store.Deliver(ctx, d.ID, func(ctx context.Context, tx *sqlx.Tx) error {
			return o.shop.WriteBack(ctx, tx, d.Kind, writeBackParams(o.cfg.Secrets, d))
		})
	}
	n := o.targets[d.Target]
	if n == nil {
		// The notifier was removed from the configuration since the event:
		// nothing to send it to.
		return o.store.Deliver(ctx, d.ID, func(context.Context, *sqlx.Tx) error { return nil })
	}
	body, err := json.Marshal(noticeOf(d))
	if err != nil {
		return fmt.Errorf("encode notice: %w", err)
	}
	// The details were redacted as the outbox kept them; a secret
	// joined the set since is redacted from the notice as it leaves.
	body = []byte(o.cfg.Secrets.Redact(string(body)))
	// The send has its own timeout; this bounds the transaction around it.
	ctx, cancel := context.WithTimeout(ctx, max(o.cfg.Webhook.Timeout, o.cfg.Command.Timeout)+deliverySlack)
	defer cancel()
	return o.store.Deliver(ctx, d.ID, func(ctx context.Context, _ *sqlx.Tx) error { return n.send(ctx, noticeOf(d), body) })
}

// writeBackParams are the write-back statement's parameters of d.
func writeBackParams(secrets *redact.Secrets, d store.Delivery) shopdb.WriteBackParams {
	reason := joinText(Reason(d.Reason).Words, d.Detail) // ReasonNone has no words
	return shopdb.WriteBackParams{Insurer: d.Insurer, Job: d.Job, Request: d.RequestID, Claim: d.Claim, Status: d.Kind,
		Reason: cutRunes(secrets.Redact(reason), reasonMax), Time: d.At}
}

// cutRunes keeps at most n characters of s.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
