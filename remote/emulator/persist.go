package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// stateFormat is the version of the StatePath file layout.
const stateFormat = 1

type persistedState struct {
	Format int   `json:"format"`
	State  State `json:"state"`
}

// loadStore reads a StatePath file; it returns nil, nil when the file does
// not exist yet.
func loadStore(path string) (*store, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ps persistedState
	if err := json.Unmarshal(data, &ps); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if ps.Format != stateFormat {
		return nil, fmt.Errorf("format %d: this emulator reads format %d", ps.Format, stateFormat)
	}
	return storeFromState(ps.State)
}

// storeFromState rebuilds a store from a State.
func storeFromState(st State) (*store, error) {
	s := newStore()
	for _, r := range st.Requests {
		if r.ID == "" || s.requests[r.ID] != nil {
			return nil, fmt.Errorf("request %q: empty or repeated id", r.ID)
		}
		s.requests[r.ID] = &request{
			id: r.ID, claimNumber: r.ClaimNumber, expiry: r.Expiry.UTC(),
			instructions: objectOrNil(r.Instructions), vehicle: objectOrNil(r.Vehicle), accident: objectOrNil(r.Accident),
			referenceID: r.ReferenceID, bookingDate: r.BookingDate, acceptedAt: r.AcceptedAt,
		}
		s.reqOrder = append(s.reqOrder, r.ID)
		if n, err := strconv.ParseInt(r.ID, 10, 64); err == nil && n > s.nextRequestID {
			s.nextRequestID = n
		}
	}
	for _, js := range st.Jobs {
		if js.ID == "" || s.jobs[js.ID] != nil {
			return nil, fmt.Errorf("job %q: empty or repeated id", js.ID)
		}
		j := &job{id: js.ID, requestID: js.RequestID, claimNumber: js.ClaimNumber, bookingDate: js.BookingDate,
			createdAt: js.CreatedAt, nextItemID: js.NextItemID, quotes: make(map[string]*storedQuote)}
		for _, qs := range js.Quotes {
			q, aerr := decodeQuote(qs.Body, true, true)
			if aerr != nil {
				return nil, fmt.Errorf("job %s quote %s: %s", js.ID, qs.Type, aerr.detail.Message)
			}
			if q.Type != qs.Type || j.quotes[q.Type] != nil {
				return nil, fmt.Errorf("job %s quote %s: type mismatch or repeated", js.ID, qs.Type)
			}
			j.quotes[q.Type] = &storedQuote{quote: q, submitCount: qs.SubmitCount, writes: qs.Writes,
				createdAt: qs.CreatedAt, updatedAt: qs.UpdatedAt, submittedAt: qs.SubmittedAt}
			j.quoteOrder = append(j.quoteOrder, q.Type)
		}
		s.jobs[js.ID] = j
		s.jobOrder = append(s.jobOrder, js.ID)
	}
	for _, h := range st.History {
		h.Body = compactRaw(h.Body)
		s.history = append(s.history, h)
	}
	return s, nil
}
