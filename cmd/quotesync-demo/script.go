package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// step is one action of the shop's script.
type step struct {
	what  string                                  // for the "did not converge" report
	ready func(ctx context.Context) (bool, error) // the step waits until it is true
	do    func(ctx context.Context) error
}

// script plays the shop's part: after each pass of the daemon it runs its
// next step, if that step is ready. The shop works through its own
// connections (sampleshop.Shop), as the shop's application would; it never
// touches quotesync's tables.
type script struct {
	shop *sampleshop.Shop
	s    *stack // each claim's request is read from its insurer's emulator
	tl   *timeline
	jobs map[string]string // claim → job number, once the shop has one
	list []step
	next int
}

func newScript(s *stack, tl *timeline) *script {
	sc := &script{shop: s.shop, s: s, tl: tl, jobs: make(map[string]string)}
	sc.list = sc.steps()
	return sc
}

// advance runs the next step if it is ready; it reports whether it ran one.
func (sc *script) advance(ctx context.Context) (bool, error) {
	if sc.finished() {
		return false, nil
	}
	st := sc.list[sc.next]
	ok, err := st.ready(ctx)
	if err != nil || !ok {
		return false, err
	}
	if err := st.do(ctx); err != nil {
		return false, fmt.Errorf("run the shop's step %q: %w", st.what, err)
	}
	sc.next++
	return true, nil
}

func (sc *script) finished() bool { return sc.next >= len(sc.list) }

// waiting says which step the script waits to run, "" when finished.
func (sc *script) waiting() string {
	if sc.finished() {
		return ""
	}
	return fmt.Sprintf("step %d of %d: %s", sc.next+1, len(sc.list), sc.list[sc.next].what)
}

// job returns the shop's job number for a claim (the sample data's, or the
// one create_job made); an error when the shop has none yet.
func (sc *script) job(ctx context.Context, claim string) (string, error) {
	if job, ok := sc.jobs[claim]; ok {
		return job, nil
	}
	job, err := sc.shop.FindJob(ctx, claim)
	if err != nil {
		return "", err
	}
	if job == "" {
		return "", fmt.Errorf("find the job of claim %s: %w", claim, sampleshop.ErrNoSuchJob)
	}
	sc.jobs[claim] = job
	return job, nil
}

// remoteState reads the state of the emulator of the insurer whose
// request the claim is.
func (sc *script) remoteState(claim string) emulator.State {
	return sc.s.insurer(insurerOfClaim(claim)).emu.State()
}

// accepted is ready when the remotes have accepted the requests of claims
// (so their jobs exist in the shop).
func (sc *script) accepted(claims ...string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		for _, claim := range claims {
			r, ok := requestOfClaim(sc.remoteState(claim), claim)
			if !ok || r.Status != emulator.RequestAccepted {
				return false, nil
			}
			job, err := sc.shop.FindJob(ctx, claim)
			if err != nil || job == "" {
				return false, err
			}
		}
		return true, nil
	}
}

// inSync is ready when the remote's quote of each claim's job holds
// exactly the shop's current lines.
func (sc *script) inSync(claims ...string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		for _, claim := range claims {
			job, err := sc.shop.FindJob(ctx, claim)
			if err != nil || job == "" {
				return false, err
			}
			q, ok := remoteQuote(sc.remoteState(claim), job)
			if !ok {
				return false, nil
			}
			problems, err := compareLines(ctx, sc.shop, job, q.Body)
			if err != nil {
				return false, err
			}
			if len(problems) > 0 {
				return false, nil
			}
		}
		return true, nil
	}
}

func requestOfClaim(st emulator.State, claim string) (emulator.RequestState, bool) {
	i := slices.IndexFunc(st.Requests, func(r emulator.RequestState) bool { return r.ClaimNumber == claim })
	if i < 0 {
		return emulator.RequestState{}, false
	}
	return st.Requests[i], true
}

func remoteQuote(st emulator.State, job string) (emulator.QuoteState, bool) {
	j, ok := st.Job(job)
	if !ok {
		return emulator.QuoteState{}, false
	}
	return j.Quote(remote.QuoteTypeEstimate)
}

// compareLines lists the differences between the shop's live lines of a
// job and the items of a quote body; none when they match exactly.
func compareLines(ctx context.Context, shop *sampleshop.Shop, job string, body []byte) ([]string, error) {
	lines, err := shop.Lines(ctx, job)
	if err != nil {
		return nil, err
	}
	want, err := shopItems(lines, sampleshop.WorkTypes())
	if err != nil {
		return []string{err.Error()}, nil
	}
	got, err := quoteItems(body)
	if err != nil {
		return []string{err.Error()}, nil
	}
	return diffItems(want, got), nil
}
