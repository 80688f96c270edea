package sync

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// This file is the state machine of one tracked request, as data: its
// phases, the transitions allowed between them, the reasons that say why a
// request is where it is (or what holds it), and the intents that say which
// remote effect may have landed. The executor (exec.go), through which
// every write of a row goes, refuses any change this table does not allow
// before it writes anything.

// The phases of a tracked request (the phase column).
const (
	// PhaseWaiting: the remote lists the request, the shop has no job for
	// it yet (find_job found none and no create_job is configured, or
	// finding or creating the job failed and is tried again).
	PhaseWaiting store.Phase = "waiting"
	// PhaseReserved: a job number is allocated and committed locally; the
	// accept call is due or was sent and its outcome is not known yet.
	PhaseReserved store.Phase = "reserved"
	// PhaseAcceptUnknown: our accept may have landed (its answer was lost)
	// and a repeated accept was refused while the request left the pending
	// list; probably ours, confirmed by the first Draft push to our job.
	PhaseAcceptUnknown store.Phase = "accept_unknown"
	// PhaseAccepted: the remote confirmed our accept; no Draft yet.
	PhaseAccepted store.Phase = "accepted"
	// PhaseDrafted: a Draft was pushed; PushedHash is what the remote holds.
	PhaseDrafted store.Phase = "drafted"
	// PhaseSubmitted: the quote is Submitted. Terminal; a later change of
	// the shop's lines is flagged (SupplementNeeded), never pushed.
	PhaseSubmitted store.Phase = "submitted"
	// PhaseRejected: the remote refused for a reason retrying cannot fix.
	// `quotesync retry` puts it back into ResumePhase.
	PhaseRejected store.Phase = "rejected"
	// PhaseGone: the request expired, or left the pending list before our
	// accept landed (declined, withdrawn or taken by someone else).
	PhaseGone store.Phase = "gone"
	// PhaseTakenElsewhere: someone else accepted the request with their own
	// referenceId; never drafted or submitted under our job.
	PhaseTakenElsewhere store.Phase = "taken_elsewhere"
)

// phaseNew stands for "no row yet" as the origin of a transition.
const phaseNew store.Phase = ""

// The intents (the intent column): the remote effect that was sent and
// whose outcome is not recorded. A submit in flight is SubmittedAt set on a
// row that is not submitted yet.
const (
	// IntentNone: nothing in flight.
	IntentNone store.Intent = ""
	// IntentAccept: the reservation was made in order to accept; an accept
	// may have been sent. Cleared when the accept's outcome is settled.
	IntentAccept store.Intent = "accept"
	// IntentPush: a Draft push was sent and its answer not recorded: the
	// remote may hold it, so the next pass pushes the shop's lines again
	// whatever their hash.
	IntentPush store.Intent = "push"
)

// PhaseInfo describes one phase.
type PhaseInfo struct {
	Phase store.Phase
	// Open: passes work on requests in this phase.
	Open bool
	// Words say what the phase means, for people.
	Words string
	// WayOut says how a request leaves the phase, for people: every phase
	// a person can see has one.
	WayOut string
	// Next lists the phases a change may move a request in this phase to
	// (staying in the phase is always allowed for an open phase).
	Next []store.Phase
	// Only narrows a move to a phase of Next to the reasons it lists: a
	// request the insurer accepted with our job number is gone only when
	// its insurer is ended (quotesync insurers end), never by a pass's
	// decision, which would make its job look free.
	Only map[store.Phase][]store.Reason
}

// acceptedGone is Only of the phases where the insurer holds our job
// number as the request's referenceId.
var acceptedGone = map[store.Phase][]store.Reason{PhaseGone: {ReasonInsurerEnded}}

// phaseTable is the whole machine. Its order is the order of the phases
// in `status` and the metrics.
var phaseTable = []PhaseInfo{
	{Phase: phaseNew, Words: "not tracked yet",
		Next: []store.Phase{PhaseWaiting, PhaseReserved, PhaseGone, PhaseRejected}},
	{Phase: PhaseWaiting, Open: true, Words: "no job in the shop yet",
		WayOut: "the shop opens a job for the claim (or create_job is configured, or its failure is fixed); a pass then reserves it",
		Next:   []store.Phase{PhaseReserved, PhaseGone, PhaseRejected}},
	{Phase: PhaseReserved, Open: true, Words: "job number reserved; accept sent or due",
		WayOut: "the next pass sends the accept (again, with the same referenceId) and settles it",
		Next:   []store.Phase{PhaseAccepted, PhaseAcceptUnknown, PhaseRejected, PhaseGone, PhaseTakenElsewhere}},
	{Phase: PhaseAcceptUnknown, Open: true, Words: "accepted by us, probably: the answer to our accept was lost",
		WayOut: "the first Draft push to our job confirms it (success: ours; not found: someone else's); `quotesync retry` sends the accept again",
		Next:   []store.Phase{PhaseDrafted, PhaseTakenElsewhere, PhaseRejected, PhaseReserved, PhaseGone}, Only: acceptedGone},
	{Phase: PhaseAccepted, Open: true, Words: "accepted; no Draft pushed yet",
		WayOut: "the first Draft is pushed once the shop's estimate has lines",
		Next:   []store.Phase{PhaseDrafted, PhaseRejected, PhaseGone}, Only: acceptedGone},
	{Phase: PhaseDrafted, Open: true, Words: "Draft pushed",
		WayOut: "the quote is submitted once the shop marks the estimate final",
		Next:   []store.Phase{PhaseSubmitted, PhaseRejected, PhaseGone}, Only: acceptedGone},
	{Phase: PhaseSubmitted, Words: "submitted for assessment",
		WayOut: "done; a change after submission needs a supplement, arranged with the insurer"},
	{Phase: PhaseRejected, Words: "refused by the remote; needs a person",
		WayOut: "fix what the reason says, then `quotesync retry REQUEST`",
		Next:   []store.Phase{PhaseWaiting, PhaseReserved, PhaseAcceptUnknown, PhaseAccepted, PhaseDrafted}},
	{Phase: PhaseGone, Words: "expired or left the pending list before our accept landed, or ended with its insurer",
		WayOut: "nothing to do for quotesync; `quotesync retry REQUEST` looks at it again should the insurer list it again",
		Next:   []store.Phase{PhaseWaiting}},
	{Phase: PhaseTakenElsewhere, Words: "accepted by someone else",
		WayOut: "settle it with the insurer; `quotesync retry REQUEST` tries to accept it again",
		Next:   []store.Phase{PhaseWaiting}},
}

// Phases returns the phases of the state machine in display order (the
// origin of new rows left out).
func Phases() []PhaseInfo {
	out := make([]PhaseInfo, 0, len(phaseTable)-1)
	for _, p := range phaseTable {
		if p.Phase != phaseNew {
			p.Next = slices.Clone(p.Next)
			p.Only = maps.Clone(p.Only)
			out = append(out, p)
		}
	}
	return out
}

// phaseInfo returns the table's entry of ph; ok is false for an unknown
// phase (a row written by a newer quotesync, or by hand).
func phaseInfo(ph store.Phase) (PhaseInfo, bool) {
	for _, p := range phaseTable {
		if p.Phase == ph {
			return p, true
		}
	}
	return PhaseInfo{}, false
}

// IsOpen reports whether passes work on requests in phase ph.
func IsOpen(ph store.Phase) bool {
	p, ok := phaseInfo(ph)
	return ok && p.Open
}

// openPhases are the phases passes work on.
func openPhases() []store.Phase { return filterPhases(true) }

// ClosedPhases are the phases no pass works on: the ones a listing of
// open requests hides and `quotesync insurers end` leaves alone.
func ClosedPhases() []store.Phase { return filterPhases(false) }

func filterPhases(open bool) []store.Phase {
	var out []store.Phase
	for _, p := range phaseTable {
		if p.Phase != phaseNew && p.Open == open {
			out = append(out, p.Phase)
		}
	}
	return out
}

// allowed reports whether a change may move a request from phase from to
// phase to.
func allowed(from, to store.Phase) bool {
	p, ok := phaseInfo(from)
	if !ok {
		return false
	}
	if from == to {
		return p.Open || from == PhaseSubmitted
	}
	return slices.Contains(p.Next, to)
}

// allowedFor reports whether a change may move a request from phase from
// to phase to for reason: allowed, and a reason the move is narrowed to
// (PhaseInfo.Only), if it is.
func allowedFor(from, to store.Phase, reason store.Reason) bool {
	if !allowed(from, to) {
		return false
	}
	p, _ := phaseInfo(from)
	only, narrowed := p.Only[to]
	return !narrowed || slices.Contains(only, reason)
}

// allowedMove reports whether a request in phase from may be given to
// another insurer and be in phase to after: a move (`insurers move`, an
// adoption) changes whose the request is, never where it stands, so it
// is allowed in every phase, one this machine does not know included
// (the row is carried as it is, whatever a newer quotesync or a person
// meant by it).
func allowedMove(from, to store.Phase) bool { return from == to }

// ErrTransition: a change the state machine does not allow; only a bug
// in a decision produces one, and nothing is written.
type ErrTransition struct {
	Request  string
	From, To store.Phase
	// Reason is the change's, when the move is allowed for other reasons
	// only (PhaseInfo.Only).
	Reason store.Reason
	Only   []store.Reason
	// Move: the change was a move to another insurer (allowedMove).
	Move bool
}

func (e *ErrTransition) Error() string {
	from := cmp.Or(string(e.From), "new")
	if e.Move {
		return fmt.Sprintf("request %s: the state machine does not allow moving a request from %s to %s to another insurer", e.Request, from, e.To)
	}
	if len(e.Only) > 0 {
		only := stringsOf(e.Only, func(r store.Reason) string { return string(r) })
		return fmt.Sprintf("request %s: the state machine does not allow %s -> %s for reason %q, only for %s",
			e.Request, from, e.To, e.Reason, strings.Join(only, ", "))
	}
	return fmt.Sprintf("request %s: the state machine does not allow %s -> %s", e.Request, from, e.To)
}

// Reasons (the reason column) and what each means.
const (
	ReasonNone store.Reason = ""

	// waiting
	ReasonNoJob         store.Reason = "no_job"
	ReasonReserveFailed store.Reason = "reserve_failed"
	ReasonShopLock      store.Reason = "shop_lock"
	// temporary: a step is tried again after a backoff
	ReasonRetrying       store.Reason = "retrying"
	ReasonAcceptConflict store.Reason = "accept_conflict"
	// holds: nothing is pushed until the cause is fixed
	ReasonShopData      store.Reason = "shop_data"
	ReasonUnmappedCode  store.Reason = "unmapped_code"
	ReasonCredits       store.Reason = "credits"
	ReasonOutOfBounds   store.Reason = "out_of_bounds"
	ReasonEstimateState store.Reason = "estimate_state"
	ReasonFinalNoLines  store.Reason = "final_no_lines"
	// rejected
	ReasonRefused      store.Reason = "refused"
	ReasonJobConflict  store.Reason = "job_conflict"
	ReasonPushConflict store.Reason = "push_conflict"
	ReasonStatusPath   store.Reason = "status_path"
	// gone
	ReasonExpired        store.Reason = "expired"
	ReasonLeftList       store.Reason = "left_list"
	ReasonUnknownRequest store.Reason = "unknown_request"
	ReasonInsurerEnded   store.Reason = "insurer_ended"
	// accept outcome unknown
	ReasonAcceptLost store.Reason = "accept_lost"
	// taken elsewhere
	ReasonOtherReference store.Reason = "other_reference"
	ReasonNotOurs        store.Reason = "not_ours"
	// the write landed but its answer could not be read
	ReasonUnreadable store.Reason = "unreadable_answer"
	// the remote's data cannot be taken as it is
	ReasonBadEntry store.Reason = "bad_entry"
	ReasonTooLong  store.Reason = "too_long"
)

// ReasonInfo describes one reason.
type ReasonInfo struct {
	Reason store.Reason
	// Hold: the job is held; nothing is pushed until the cause is fixed.
	Hold bool
	// Config: a change of the configuration can lift it, so every job held
	// for it is examined again after a reload or a restart.
	Config bool
	// Person: somebody has to do something (the daemon does not get out
	// of it on its own).
	Person bool
	// Words say what it means, Fix what to do about it, for people.
	Words, Fix string
}

// reasonTable lists every reason.
var reasonTable = []ReasonInfo{
	{Reason: ReasonNoJob, Words: "the shop has no job for this claim yet",
		Fix: "open a job for the claim in the shop (find_job must find it), or configure shop.queries.create_job"},
	{Reason: ReasonReserveFailed, Person: true, Words: "finding or creating the shop's job failed",
		Fix: "fix the mapping or the shop data the error names; the daemon tries again after a backoff"},
	{Reason: ReasonShopLock, Words: "finding or creating the shop's job waited for a lock another session of the database holds (the shop's program with a dialog open, say) longer than shop.lock_wait",
		Fix: "nothing, if it lasts a pass or two; else end the transaction the details name (close the shop program's dialog, or KILL its connection if it is stuck); the request is tried again at every pass, and the others go on"},
	{Reason: ReasonRetrying, Words: "a remote call failed for now",
		Fix: "nothing: it is tried again after a backoff (see the next attempt)"},
	{Reason: ReasonAcceptConflict, Words: "the remote refused our job number as in use while the request is still pending",
		Fix: "nothing yet: tried again on the next pass; after sync.max_conflicts answers the request is rejected"},
	{Reason: ReasonShopData, Hold: true, Person: true, Words: "a line of the job's estimate is invalid",
		Fix: "fix the line in the shop; the job is released on its own when its lines change"},
	{Reason: ReasonUnmappedCode, Hold: true, Config: true, Person: true, Words: "a line's operation code is not under shop.work_types",
		Fix: "add the code under shop.work_types, then `systemctl reload quotesync`"},
	{Reason: ReasonCredits, Hold: true, Config: true, Person: true, Words: "a line is a credit (negative) and shop.allow_credits is false",
		Fix: "set shop.allow_credits: true and reload, or change the line in the shop"},
	{Reason: ReasonOutOfBounds, Hold: true, Config: true, Person: true, Words: "a line's quantity, price or total is beyond the plausible bounds, or has more digits than the remote keeps exactly",
		Fix: "fix the line in the shop, or raise the bound the error names (shop.limits) and reload"},
	{Reason: ReasonEstimateState, Hold: true, Person: true, Words: "estimate_state returns an invalid row for the job",
		Fix: "fix shop.queries.estimate_state or the shop's data it reads"},
	{Reason: ReasonFinalNoLines, Hold: true, Person: true, Words: "the estimate is final but has no lines",
		Fix: "add lines to the estimate, or take it back to draft"},
	{Reason: ReasonRefused, Person: true, Words: "the remote refused the call for good",
		Fix: "fix what the error says, then `quotesync retry REQUEST`"},
	{Reason: ReasonJobConflict, Person: true, Words: "the remote has our job number for another request",
		Fix: "give the shop's job another number (or fix find_job/create_job), then `quotesync retry REQUEST`"},
	{Reason: ReasonPushConflict, Person: true, Words: "the remote refused the Draft as a conflict and no submit of ours was sent",
		Fix: "if the service does not let a new POST replace a Draft, set remote.draft_update: put and reload, then `quotesync retry REQUEST`"},
	{Reason: ReasonStatusPath, Person: true, Words: "the remote does not serve the configured status change path",
		Fix: "set remote.status_path: auto (or the form the service serves) and reload, then `quotesync retry REQUEST`"},
	{Reason: ReasonExpired, Words: "the request expired before quotesync could accept it",
		Fix: "nothing: the insurer declines expired requests"},
	{Reason: ReasonLeftList, Words: "the request left the pending list before our accept landed: declined or withdrawn by the insurer, or accepted by someone else",
		Fix: "nothing for quotesync; ask the insurer if the shop expected the job"},
	{Reason: ReasonUnknownRequest, Words: "the remote no longer knows the request",
		Fix: "nothing for quotesync; ask the insurer if the shop expected the job"},
	{Reason: ReasonInsurerEnded, Words: "its insurer was removed from the configuration and its requests ended (quotesync insurers end)",
		Fix: "nothing for quotesync; the shop keeps the job (one the insurer had accepted stays held by the request: no other request is given it), and the insurer's service is no longer called"},
	{Reason: ReasonAcceptLost, Person: true, Words: "our accept may have landed: its answer was lost, then a repeated accept was refused while the request left the pending list",
		Fix: "nothing yet: the first Draft push to our job confirms it (the job needs lines); `quotesync retry REQUEST` sends the accept again"},
	{Reason: ReasonOtherReference, Person: true, Words: "the remote says someone else accepted the request with their own referenceId",
		Fix: "settle it with the insurer; the job number quotesync reserved for it is released or reported as unused"},
	{Reason: ReasonNotOurs, Person: true, Words: "the Draft push to our job found no such job: our accept never landed and someone else has the request",
		Fix: "settle it with the insurer; the job number quotesync reserved for it is released or reported as unused"},
	{Reason: ReasonUnreadable, Person: true, Words: "the remote took the write but its answer could not be read",
		Fix: "nothing is sent again, and the quote is not submitted, until the shop's lines change or `quotesync retry REQUEST` (which pushes the Draft again); tell the insurer's support what the error shows"},
	{Reason: ReasonBadEntry, Person: true, Words: "an entry of the remote's pending list cannot be read (a field of the wrong type, text that is not valid UTF-8, an id or claim number holding a control character, an entry too large or nested too deep)",
		Fix: "tell the insurer's support which entry: the log names its position, its id when readable and the field; the other requests go on, and the entry is taken once the service lists it readable"},
	{Reason: ReasonTooLong, Person: true, Words: "a value of the request (its id or claim number) is longer than the column it must be stored in",
		Fix: "quotesync keeps request ids of up to 64 bytes and claim numbers of up to 128: ask the insurer; a shop column that find_job/create_job writes to: widen it (or change the mapping), then `quotesync retry REQUEST`"},
}

// Reason returns the description of r; a reason this quotesync does not
// know is described as such.
func Reason(r store.Reason) ReasonInfo {
	for _, ri := range reasonTable {
		if ri.Reason == r {
			return ri
		}
	}
	return ReasonInfo{Reason: r, Person: r != ReasonNone, Words: string(r)}
}

// held reports whether r holds a job back.
func held(r store.Request) bool { return Reason(r.Reason).Hold }

// Notices: what the shop's system and people are told of. The event of a
// change gives at most one notice kind: the shop's write-back statements
// (shop.write_back, keyed by shopdb.WriteBackKinds) and the notifiers are
// keyed by them. Two notices are no change of a row: a request close to
// its expiry that is not accepted, and the remote refusing the token.
const (
	NoticeExpiring    = "expiring"
	NoticeAuthFailing = "auth_failing"
)

// noticeTable maps each event of a change to its notice kind.
var noticeTable = map[EventKind]string{
	EventAccepted:       shopdb.WriteBackAccepted,
	EventDrafted:        shopdb.WriteBackDraftPushed,
	EventRedrafted:      shopdb.WriteBackDraftPushed,
	EventSubmitted:      shopdb.WriteBackSubmitted,
	EventRejected:       shopdb.WriteBackRejected,
	EventTakenElsewhere: shopdb.WriteBackTakenElsewhere,
	EventSupplement:     shopdb.WriteBackSupplementNeeded,
	EventGone:           shopdb.WriteBackGone,
	EventRetry:          shopdb.WriteBackRetried,
	EventExpiring:       NoticeExpiring,
	EventAuthFailing:    NoticeAuthFailing,
}

// NotifyKinds are the notices a notifier may send, those that need a
// person, and its default list.
func NotifyKinds() []string {
	return []string{shopdb.WriteBackRejected, shopdb.WriteBackTakenElsewhere, shopdb.WriteBackSupplementNeeded,
		NoticeExpiring, NoticeAuthFailing}
}

// What a submitted request whose lines changed afterwards (its
// SupplementNeeded flag; no reason) means and what to do, for people.
const (
	SupplementWords = "the shop's lines changed after the quote was submitted; a supplement is needed"
	SupplementFix   = "arrange the supplement with the insurer (it is never pushed)"
)

// NeedsPerson reports whether r waits for somebody to act or know: its
// reason says so, or a supplement is needed.
func NeedsPerson(r store.Request) bool {
	return r.SupplementNeeded || (r.Reason != ReasonNone && Reason(r.Reason).Person)
}

// QuietReasons lists the reasons that do not need a person (ReasonNone
// among them): a request with another reason, or with a supplement
// flagged, needs one (NeedsPerson).
func QuietReasons() []store.Reason {
	out := []store.Reason{ReasonNone}
	for _, ri := range reasonTable {
		if !ri.Person {
			out = append(out, ri.Reason)
		}
	}
	return out
}
