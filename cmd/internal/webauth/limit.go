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
// by its /64): each failure takes a token of the address's bucket. A check
// of a password is admitted (begin) only while the address has a token
// for it beyond its checks still under way, so that guesses sent at once
// are limited as those sent one after another.
//
// It remembers at most maxLimited addresses; when full, it forgets the
// one whose last failure is the oldest, so that failures from many
// addresses never refuse one that did not fail. Finding it is a scan
// without allocation, tens of microseconds beside a bcrypt check
// (hashicorp/golang-lru was weighed: a dependency for one loop).
type failLimiter struct {
	burst int
	every time.Duration

	mu     gosync.Mutex
	m      map[netip.Prefix]*failBucket // addresses that failed
	checks map[netip.Prefix]int         // checks under way, by address
}

type failBucket struct {
	lim  *rate.Limiter
	last time.Time // of the last failure
}

func newFailLimiter(burst int, every time.Duration) *failLimiter {
	return &failLimiter{burst: burst, every: every, m: map[netip.Prefix]*failBucket{}, checks: map[netip.Prefix]int{}}
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

// begin admits a check of the address's password: it returns 0, and the
// caller then calls end once. Otherwise it returns how long the address
// must wait before its next try.
func (l *failLimiter) begin(key netip.Prefix, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d := l.waitLocked(key, now); d > 0 {
		return d
	}
	l.checks[key]++
	return 0
}

// end ends a check that begin admitted; failed says the password was
// wrong. It reports whether this failure used the address's last token.
func (l *failLimiter) end(key netip.Prefix, now time.Time, failed bool) (limited bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.checks[key]--; l.checks[key] <= 0 {
		delete(l.checks, key)
	}
	if !failed {
		return false
	}
	b, ok := l.m[key]
	if !ok {
		if len(l.m) >= maxLimited { // forget the address whose last failure is the oldest
			var oldest netip.Prefix
			var at *failBucket
			for k, v := range l.m {
				if at == nil || v.last.Before(at.last) {
					oldest, at = k, v
				}
			}
			delete(l.m, oldest)
		}
		b = &failBucket{lim: rate.NewLimiter(rate.Every(l.every), l.burst)}
		l.m[key] = b
	}
	b.last = now
	before := b.lim.TokensAt(now)
	b.lim.AllowN(now, 1)
	return before >= 1 && b.lim.TokensAt(now) < 1
}

func (l *failLimiter) wait(key netip.Prefix, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waitLocked(key, now)
}

// waitLocked is wait, with l.mu held: the time until the address's
// bucket holds a token more than its checks under way (at least a
// second, the unit of Retry-After).
func (l *failLimiter) waitLocked(key netip.Prefix, now time.Time) time.Duration {
	tokens := float64(l.burst)
	if b, ok := l.m[key]; ok {
		tokens = b.lim.TokensAt(now)
	}
	need := float64(l.checks[key] + 1)
	if tokens >= need {
		return 0
	}
	need = min(need, float64(l.burst))
	return max(time.Duration((need-tokens)*float64(l.every)), time.Second)
}
