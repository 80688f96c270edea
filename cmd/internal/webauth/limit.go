package webauth

import (
	"net"
	"net/netip"
	gosync "sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the failed-login limit per client address.
const (
	// DefaultFailBurst is how many failed logins an address may make in a
	// row before it has to wait.
	DefaultFailBurst = 5
	// DefaultFailEvery is how often an address that used its burst may
	// try again.
	DefaultFailEvery = time.Minute
	// maxLimited caps the addresses remembered.
	maxLimited = 4096
)

// failLimiter counts failed logins per client address (an IPv6 address
// by its /64, which one host usually holds whole): each failure takes a
// token of the address's bucket; an address without a token is refused
// before its password is even looked at.
type failLimiter struct {
	burst int
	every time.Duration

	mu gosync.Mutex
	m  map[netip.Prefix]*rate.Limiter
}

func newFailLimiter(burst int, every time.Duration) *failLimiter {
	return &failLimiter{burst: burst, every: every, m: map[netip.Prefix]*rate.Limiter{}}
}

// clientKey is the address a request's failures count against.
func clientKey(remoteAddr string) netip.Prefix {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{} // one bucket for whatever does not parse
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return netip.PrefixFrom(ip, 32)
	}
	p, _ := ip.WithZone("").Prefix(64)
	return p
}

// wait says how long the address must wait before its next try; 0 when
// it may try now.
func (l *failLimiter) wait(key netip.Prefix, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.m[key]
	if !ok {
		if len(l.m) >= maxLimited && !l.evict(now) {
			return l.every // too many addresses failing at once: fail closed
		}
		return 0
	}
	if lim.TokensAt(now) >= 1 {
		return 0
	}
	r := lim.ReserveN(now, 1)
	d := r.DelayFrom(now)
	r.CancelAt(now)
	return max(d, time.Second)
}

// fail records a failed login of the address; it reports whether the
// address has now used its burst.
func (l *failLimiter) fail(key netip.Prefix, now time.Time) (limited bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.m[key]
	if !ok {
		if len(l.m) >= maxLimited && !l.evict(now) {
			return true
		}
		lim = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.m[key] = lim
	}
	lim.AllowN(now, 1)
	return lim.TokensAt(now) < 1
}

// evict forgets the addresses whose bucket is full again; it reports
// whether there is room now.
func (l *failLimiter) evict(now time.Time) bool {
	for k, lim := range l.m {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.m, k)
		}
	}
	return len(l.m) < maxLimited
}
