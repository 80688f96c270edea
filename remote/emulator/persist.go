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

// loadStore reads a StatePath file; it returns an empty store when path is
// "" or the file does not exist yet.
func loadStore(path string) (*store, error) {
	if path == "" {
		return newStore(), nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newStore(), nil
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
		r.Expiry, r.Status = r.Expiry.UTC(), ""
		r.Instructions, r.Vehicle, r.Accident = objectOrNil(r.Instructions), objectOrNil(r.Vehicle), objectOrNil(r.Accident)
		s.requests[r.ID] = &r
		s.reqOrder = append(s.reqOrder, r.ID)
		if n, err := strconv.ParseInt(r.ID, 10, 64); err == nil && n > s.nextRequestID {
			s.nextRequestID = n
		}
	}
	for _, js := range st.Jobs {
		if js.ID == "" || s.jobs[js.ID] != nil {
			return nil, fmt.Errorf("job %q: empty or repeated id", js.ID)
		}
		j := &job{JobState: js, quotes: make(map[string]*storedQuote)}
		j.Quotes = nil
		for _, qs := range js.Quotes {
			q, aerr := decodeQuote(qs.Body, true, true)
			if aerr != nil {
				return nil, fmt.Errorf("job %s quote %s: %s", js.ID, qs.Type, aerr.detail.Message)
			}
			if q.Type != qs.Type || j.quotes[q.Type] != nil {
				return nil, fmt.Errorf("job %s quote %s: type mismatch or repeated", js.ID, qs.Type)
			}
			qs.Body = nil
			j.quotes[q.Type] = &storedQuote{QuoteState: qs, quote: q}
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
