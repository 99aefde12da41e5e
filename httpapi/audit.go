package httpapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"cairn/app"
	"cairn/auth"
)

// auditBatch bounds the rows one transaction of the auditor writes;
// auditLinger is how long it waits for more rows after the first of a
// group, so that the rows of a steady stream of changes share commits.
const (
	auditBatch  = 512
	auditLinger = 50 * time.Millisecond
)

// auditor writes the audit rows of the changes clients ask, in groups:
// each transaction takes the rows that come within 50 ms of the first, so
// under a load of changes the audit costs at most 20 commits a second
// rather than one a request (every commit makes the readers of the
// database drop their caches). A row is written within moments of its
// request's answer; the server's stop waits for every row, and only a
// crash can lose the rows of its last moment (never a change's own record:
// its proposal and commit name who made it).
type auditor struct {
	app  *app.App
	log  *slog.Logger
	rows chan *auth.Request
	done chan struct{}

	mu     sync.RWMutex // held to send, and to close
	closed bool
}

func newAuditor(a *app.App, log *slog.Logger) *auditor {
	return &auditor{app: a, log: log, rows: make(chan *auth.Request, 4096), done: make(chan struct{})}
}

// add queues a row; it waits when many are queued already. A row added
// after close (a handler a forced stop could not wait for) is logged.
func (au *auditor) add(r *auth.Request) {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	au.mu.RLock()
	defer au.mu.RUnlock()
	if au.closed {
		au.log.Error("a change asked after the audit closed", "route", r.Route, "principal", r.Principal, "status", r.Status)
		return
	}
	au.rows <- r
}

// run writes the rows queued until close, then the rest.
func (au *auditor) run() {
	defer close(au.done)
	for r := range au.rows {
		batch := []*auth.Request{r}
		linger := time.NewTimer(auditLinger)
	more:
		for len(batch) < auditBatch {
			select {
			case r, ok := <-au.rows:
				if !ok {
					break more
				}
				batch = append(batch, r)
			case <-linger.C:
				break more
			}
		}
		linger.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := au.app.AuditRequests(ctx, batch...); err != nil {
			au.log.Error("audit the changes asked", "rows", len(batch), "first", batch[0].Route, "err", err)
		}
		cancel()
	}
}

// close stops taking rows and waits until those queued are written.
func (au *auditor) close() {
	au.mu.Lock()
	au.closed = true
	close(au.rows)
	au.mu.Unlock()
	<-au.done
}
