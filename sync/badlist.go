package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/store"
)

// listPending lists the pending requests. A partial answer (some entries
// undecodable) is used for the good ones; entries quotesync cannot take
// (undecodable, or an id or claim number longer than its columns) are
// left out and reported once per change: each when it first appears in
// the list, again only after it left the list and came back. The others
// go on, and the pass does not fail.
func (e *Engine) listPending(ctx context.Context, p *pass) (pendingList, error) {
	pending, err := e.remote.ListRequests(ctx)
	var de *remote.DecodeError
	if err != nil && !errors.As(err, &de) {
		if errors.Is(err, remote.ErrUnauthorized) {
			return pendingList{}, fmt.Errorf("list pending requests: %w: %w", ErrUnauthorized, err)
		}
		return pendingList{}, fmt.Errorf("list pending requests: %w", err)
	}
	l := pendingList{requests: make([]remote.Request, 0, len(pending)), skipped: make(map[string]bool)}
	var bad []badEntry
	total := len(pending)
	if de != nil {
		total = de.Total
		for _, sk := range de.Skipped {
			switch {
			case sk.ID != "":
				l.skipped[sk.ID] = true
			case sk.IDText == "" && !sk.Unlike:
				// No id could be read: any request may be this one.
				l.blind = true
			}
			// (An id too long to read whole, or of a type no id has, is
			// no tracked request's.)
			bad = append(bad, badEntryOf(e.cfg.Secrets, sk))
		}
	}
	for _, r := range pending {
		if len(r.ID) > store.MaxRequestIDLen || len(r.ClaimNumber) > store.MaxClaimLen {
			if len(r.ID) <= store.MaxRequestIDLen {
				l.skipped[r.ID] = true // listed all the same
			}
			bad = append(bad, tooLongEntry(e.cfg.Secrets, r))
			continue
		}
		l.requests = append(l.requests, r)
	}
	e.reportChanges(bad)
	p.summary.Pending = total
	return l, nil
}

// badEntry is one entry of the pending list quotesync cannot take: key
// identifies it across listings, ev reports it.
type badEntry struct {
	key string
	ev  Event
}

// maxShownID is how much of a request id or claim number an event shows.
const maxShownID = 64

// badEntryOf reports an undecodable entry: by its id when readable, else
// by its position; the field at fault and the cause, bounded.
func badEntryOf(set *redact.Secrets, sk remote.SkippedRequest) badEntry {
	who, name := sk.IDText, "request "+boundText(set, sk.IDText, 2*maxShownID)
	if who == "" {
		who, name = fmt.Sprintf("#%d", sk.Index), "no readable id" // no id: its position is all there is
	}
	cause := boundText(set, sk.Err.Error(), 1000)
	return badEntry{
		// By id and field, not by position or error text (both hold the
		// position, which moves as other requests come and go).
		key: "bad:" + boundText(set, who, 2*maxShownID) + ":" + sk.Field,
		ev: Event{Kind: EventSkipped, Request: boundText(set, sk.IDText, 2*maxShownID), Reason: ReasonBadEntry,
			Detail: fmt.Sprintf("entry %d (%s) of the pending list cannot be read (field %s); it is left out, the other requests go on: tell the insurer's support",
				sk.Index, name, cmp.Or(sk.Field, "the whole entry")),
			Err: errors.New(cause)},
	}
}

// tooLongEntry reports a listed request whose id or claim number is longer
// than quotesync's columns: it cannot be tracked, so it is left out.
func tooLongEntry(set *redact.Secrets, r remote.Request) badEntry {
	id, claim := boundText(set, r.ID, maxShownID), boundText(set, r.ClaimNumber, maxShownID)
	return badEntry{
		key: fmt.Sprintf("long:%s:%d:%s:%d", id, len(r.ID), claim, len(r.ClaimNumber)),
		ev: Event{Kind: EventSkipped, Request: id, Claim: claim, Reason: ReasonTooLong,
			Detail: fmt.Sprintf("the request id (%d bytes) or its claim number (%d bytes) is longer than quotesync keeps (%d and %d bytes): the request is left out, the others go on; ask the insurer",
				len(r.ID), len(r.ClaimNumber), store.MaxRequestIDLen, store.MaxClaimLen)},
	}
}

// reportChanges reports the entries of this listing that the last one did
// not report, and remembers this listing's: a bad entry is logged once
// while it stays in the list, not once per pass, and what is remembered
// never outgrows the list.
func (e *Engine) reportChanges(bad []badEntry) {
	now := make(map[string]bool, len(bad))
	var fresh []Event
	e.mu.Lock()
	for _, b := range bad {
		if !e.reported[b.key] && !now[b.key] {
			fresh = append(fresh, b.ev)
		}
		now[b.key] = true
	}
	e.reported = now
	e.mu.Unlock()
	for _, ev := range fresh {
		e.emit(ev)
	}
}
