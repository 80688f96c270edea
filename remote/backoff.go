package remote

import "time"

// Backoff is quotesync's one retry policy: the client's attempts within a
// call (Config.BackoffInitial/Max) and, in sync, a request's next attempt
// and a delivery's next try (sync.retry_backoff_min/max) all wait by it.
// cenkalti/backoff/v5 was weighed: its ExponentialBackOff counts attempts
// in its own state and draws from the global random source, where sync
// counts them in its state rows and its decisions take chance as an input.
type Backoff struct {
	// Initial is the wait after the first failure; it doubles with each
	// further one.
	Initial time.Duration
	// Max caps every wait, a Retry-After's included.
	Max time.Duration
}

// BackoffSpread is how far a wait strays from the doubled one, either way
// (±20%): failures at one moment do not all come back at one moment.
const BackoffSpread = 0.2

// Delay returns the wait before the attempt after the n-th consecutive
// failure (n ≥ 1): Initial doubled n-1 times, at most Max, moved by r (in
// [0, 1): 0 is BackoffSpread shorter, 0.5 the doubled wait itself, towards
// 1 BackoffSpread longer), and never shorter than the server's
// retryAfter. No wait is longer than Max.
func (b Backoff) Delay(n int, retryAfter time.Duration, r float64) time.Duration {
	d := b.Max
	if k := max(n-1, 0); k < 63 && b.Initial <= b.Max>>k {
		d = b.Initial << k
	}
	d += time.Duration((2*r - 1) * BackoffSpread * float64(d))
	return min(max(d, retryAfter), b.Max)
}
