package emulator

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing/iotest"
	"time"
)

// Fault actions: see the package documentation.
const (
	FaultStatus       = "status"
	FaultLatency      = "latency"
	FaultDrop         = "drop"
	FaultGarbage      = "garbage"
	FaultLandThenDrop = "land_then_drop"
	FaultLandThenHang = "land_then_hang"
	FaultEcho         = "echo"
)

// The statuses of "echo" and "status" faults that name none.
const (
	DefaultEchoStatus  = http.StatusBadRequest
	DefaultFaultStatus = http.StatusServiceUnavailable
)

// Fault is a failure injected on API calls, in the style of WireMock
// scenarios and the LocalStack chaos API. The first active fault (in the
// order added) whose Route matches a call and whose Probability draw
// succeeds fires, once per call.
type Fault struct {
	// Route is a route name of Routes ("POST /requests/{id}"), "*" for
	// every API route, or RouteToken for ModeDocumented's token endpoint.
	Route string
	// Action is one of the Fault… constants.
	Action string
	// Status is the status of a "status" fault (0: DefaultFaultStatus)
	// or an "echo" fault (0: DefaultEchoStatus).
	Status int
	// RetryAfter adds a Retry-After header (whole seconds, rounded up) to a
	// "status" fault; 0 adds none.
	RetryAfter time.Duration
	// Latency is the wait of "latency" and the hang of "land_then_hang"
	// (0 there: until the client goes away, at most DefaultMaxHang).
	Latency time.Duration
	// Count is how many times the fault fires; 0 means unlimited.
	Count int
	// Probability is the chance the fault fires on a matching call; 0 or 1
	// means always. Draws use the emulator's seeded source (Options.Seed).
	Probability float64
}

// FaultInfo is an added fault with its id and how often it has fired.
type FaultInfo struct {
	ID     string
	Fault  Fault
	Fired  int
	Active bool // false once Count is used up
}

// Validate reports what is wrong with f, naming the field.
func (f Fault) Validate() error {
	switch {
	case f.Route != "*" && f.Route != RouteToken && !slices.Contains(Routes(), f.Route):
		return fmt.Errorf("fault route %q: not an API route (see Routes), \"*\" nor %q", f.Route, RouteToken)
	case f.Count < 0:
		return errors.New("fault count: must be 0 (unlimited) or more")
	case f.Probability < 0 || f.Probability > 1 || math.IsNaN(f.Probability):
		return errors.New("fault probability: must be between 0 and 1")
	case f.RetryAfter < 0 || f.Latency < 0:
		return errors.New("fault retryAfter, latency: must not be negative")
	}
	switch f.Action {
	case FaultStatus, FaultEcho:
		if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
			return fmt.Errorf("fault status %d: must be 400-599", f.Status)
		}
	case FaultLatency:
		if f.Latency <= 0 {
			return errors.New("fault latency: required for a latency fault")
		}
	case FaultDrop, FaultGarbage, FaultLandThenDrop, FaultLandThenHang:
	default:
		return fmt.Errorf("fault action %q: must be status, latency, drop, garbage, land_then_drop, land_then_hang or echo", f.Action)
	}
	return nil
}

// AddFault adds a fault and returns its id. It panics when f is invalid
// (see Fault.Validate), as regexp.MustCompile does: a fault that can never
// fire would let a test pass without testing anything.
func (e *Emulator) AddFault(f Fault) string {
	if err := f.Validate(); err != nil {
		panic("emulator: AddFault: " + err.Error())
	}
	f.Status = cmp.Or(f.Status, map[string]int{FaultStatus: DefaultFaultStatus, FaultEcho: DefaultEchoStatus}[f.Action])
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextF++
	id := "f" + strconv.Itoa(e.nextF)
	e.faults = append(e.faults, &FaultInfo{ID: id, Fault: f, Active: true})
	return id
}

// RemoveFault removes one fault; it reports whether the id existed.
func (e *Emulator) RemoveFault(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.faults)
	e.faults = slices.DeleteFunc(e.faults, func(fi *FaultInfo) bool { return fi.ID == id })
	return len(e.faults) < n
}

// ClearFaults removes every fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	e.faults = nil
	e.mu.Unlock()
}

// Faults lists the faults added, in order, used-up ones included.
func (e *Emulator) Faults() []FaultInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]FaultInfo, 0, len(e.faults))
	for _, fi := range e.faults {
		out = append(out, *fi)
	}
	return out
}

// pickFault returns the fault that fires on a call of route; the zero
// Fault when none does.
func (e *Emulator) pickFault(route string) Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, fi := range e.faults {
		if !fi.Active || (fi.Fault.Route != "*" && fi.Fault.Route != route) {
			continue
		}
		if p := fi.Fault.Probability; p > 0 && p < 1 && e.rng.Float64() >= p {
			continue
		}
		fi.Fired++
		fi.Active = fi.Fault.Count == 0 || fi.Fired < fi.Fault.Count
		return fi.Fault
	}
	return Fault{}
}

// garbageBody is what a "garbage" fault answers: an HTML error page of a
// proxy, followed by a cut JSON object, under a JSON Content-Type.
const garbageBody = "<html><body><h1>502 Bad Gateway</h1></body></html>\n{\"id\": 12, \"trunc"

// serveFaulted serves a call of route: by serve, the real handler, unless
// a fault fires on it.
func (e *Emulator) serveFaulted(w http.ResponseWriter, r *http.Request, route string, serve func(http.ResponseWriter)) {
	switch f := e.pickFault(route); f.Action {
	case FaultStatus:
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.RetryAfter.Seconds()))))
		}
		e.writeError(w, newError(f.Status, CodeInjectedFault, "injected fault: %s answers %d", r.Method, f.Status))
	case FaultLatency:
		e.readAhead(r)
		if wait(r, f.Latency) {
			serve(w)
		}
	case FaultDrop:
		dropConnection(w)
	case FaultGarbage:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(garbageBody))
	case FaultEcho:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(e.echoBody(r)))
	case FaultLandThenDrop:
		serve(httptest.NewRecorder()) // the answer is lost
		dropConnection(w)
	case FaultLandThenHang:
		e.readAhead(r)
		serve(httptest.NewRecorder())
		wait(r, cmp.Or(f.Latency, DefaultMaxHang))
		dropConnection(w)
	default:
		serve(w)
	}
}

// readAhead reads the request body (up to MaxBodyBytes+1 bytes) before a
// fault waits, and puts it back for the handler: net/http notices a
// departed client only once the body has been read to its end, and a wait
// that cannot notice would block Server.Close. A body over the cap is put
// back whole (the handler answers 413).
func (e *Emulator) readAhead(r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, e.opts.MaxBodyBytes+1))
	var rest io.Reader = r.Body
	if err != nil {
		rest = iotest.ErrReader(err) // the handler meets the read error
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(buf), rest))
}

// wait sleeps d; false when the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// HTTP/2 or a wrapped writer: abort the response the standard way.
	panic(http.ErrAbortHandler)
}
