package httpapi

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"cairn/admit"
	"cairn/app"
)

// policyTTL is how long the limiter keeps main's policy before reading it
// again: a change of server.rate takes effect within it.
const policyTTL = 2 * time.Second

// limiter keeps a token bucket per token: the vault's settings server.rate
// (requests a second) and server.burst.
type limiter struct {
	app *app.App

	mu      sync.Mutex
	read    time.Time // when the policy was read
	rate    rate.Limit
	burst   int
	buckets map[string]*rate.Limiter
}

func newLimiter(a *app.App) *limiter {
	return &limiter{app: a, rate: admit.DefaultRate, burst: admit.DefaultBurst, buckets: map[string]*rate.Limiter{}}
}

// allow takes one request of token from its bucket: ok, or how long until
// one would be allowed.
func (l *limiter) allow(ctx context.Context, token string) (wait time.Duration, ok bool) {
	l.refresh(ctx)
	l.mu.Lock()
	b := l.buckets[token]
	if b == nil {
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[token] = b
	}
	l.mu.Unlock()
	now := time.Now()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// refresh reads main's policy when the one held is older than policyTTL,
// and applies a changed rate to every bucket. A policy that cannot be
// read keeps the one held.
func (l *limiter) refresh(ctx context.Context) {
	l.mu.Lock()
	stale := time.Since(l.read) > policyTTL
	if stale {
		l.read = time.Now() // one reader at a time
	}
	l.mu.Unlock()
	if !stale {
		return
	}
	pol, err := l.app.Policy(ctx)
	if err != nil {
		return
	}
	r, b := rate.Limit(pol.Rate()), pol.Burst()
	l.mu.Lock()
	defer l.mu.Unlock()
	if r == l.rate && b == l.burst {
		return
	}
	l.rate, l.burst = r, b
	for _, bucket := range l.buckets {
		bucket.SetLimit(r)
		bucket.SetBurst(b)
	}
}
