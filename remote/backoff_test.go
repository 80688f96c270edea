package remote

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestBackoff pins the policy: doubling from Initial, at most Max, ±20%
// around the doubled wait, a Retry-After waited at least and capped at
// Max. The bounds are those sync's per-request backoff had before the two
// policies became one.
func TestBackoff(t *testing.T) {
	b := Backoff{Initial: time.Minute, Max: time.Hour}
	tests := []struct {
		n          int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 48 * time.Second, 72 * time.Second},
		{2, 0, 96 * time.Second, 144 * time.Second},
		{4, 0, 384 * time.Second, 576 * time.Second},
		{7, 0, 48 * time.Minute, time.Hour},
		{30, 0, 48 * time.Minute, time.Hour},
		{1000, 0, 48 * time.Minute, time.Hour},
		{1, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute},
		{4, 5 * time.Minute, 384 * time.Second, 576 * time.Second},
		{1, 3 * time.Hour, time.Hour, time.Hour},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		draws := []float64{0, 0.5, 0.999999}
		for range 50 {
			draws = append(draws, rng.Float64())
		}
		for _, r := range draws {
			if got := b.Delay(tt.n, tt.retryAfter, r); got < tt.lo || got > tt.hi {
				t.Fatalf("Delay(%d, %s, %v) = %s, want within [%s, %s]", tt.n, tt.retryAfter, r, got, tt.lo, tt.hi)
			}
		}
	}
	for _, tt := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{1, 0.5, time.Minute}, {2, 0.5, 2 * time.Minute}, {3, 0.5, 4 * time.Minute}, {7, 0.5, time.Hour},
		{1, 0, 48 * time.Second}, {3, 0, 192 * time.Second}, {30, 0, 48 * time.Minute},
	} {
		if got := b.Delay(tt.n, 0, tt.r); got != tt.want {
			t.Errorf("Delay(%d, 0, %v) = %s, want %s", tt.n, tt.r, got, tt.want)
		}
	}
	if got := (Backoff{Initial: 0, Max: time.Second}).Delay(3, 0, 0.9); got != 0 {
		t.Errorf("Delay with Initial 0 = %s, want 0", got)
	}
}
