package ingest

import (
	"context"
	"strconv"
	"sync"
	"time"

	"cairn/agent"
	"cairn/store"
)

// Bounds of what an agent's activity records: how long one line may be
// (longer ones are cut at a whole character), how many lines one job
// attempt records (the rest are counted and noted once), and how often and
// at how many lines the lines are written.
const (
	activityText   = 1000
	activityLines  = 5000
	activityPeriod = 200 * time.Millisecond
	activityBatch  = 64
)

// activityLog records what an agent does as "ingest.activity" events, so
// that every process and client sees it in the vault's event stream: each
// line with its kind (file, text, ...), as clean text. Lines are written in
// batches, at most every activityPeriod, each batch in one small
// transaction; Close writes what is left, before the job's verdict is
// recorded, so the events come in the order things happened.
type activityLog struct {
	s       *Service
	src     *Source
	job     int64
	attempt int

	// flushing orders the writes: one batch at a time, in order.
	flushing sync.Mutex
	mu       sync.Mutex
	pending  []activityLine
	lines    int // lines recorded or pending
	dropped  int // lines past activityLines
	timer    *time.Timer
	closed   bool
}

type activityLine struct {
	Time time.Time
	Kind string
	Text string
}

func (s *Service) newActivityLog(src *Source, job int64, attempt int) *activityLog {
	return &activityLog{s: s, src: src, job: job, attempt: attempt}
}

// add takes one line of the agent's activity; it never blocks on the
// database.
func (l *activityLog) add(kind, text string) {
	if l.s.activity != nil {
		l.s.activity(l.src, kind, text)
	}
	text = agent.Clean(text, activityText)
	if text == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if l.lines >= activityLines {
		l.dropped++
		return
	}
	l.lines++
	l.pending = append(l.pending, activityLine{Time: l.s.now(), Kind: kind, Text: text})
	switch {
	case len(l.pending) >= activityBatch:
		go l.flush(context.Background())
	case l.timer == nil:
		l.timer = time.AfterFunc(activityPeriod, func() { l.flush(context.Background()) })
	}
}

// flush writes the pending lines in one transaction. A failure to write
// is logged, not returned: activity is what the agent was seen doing, and
// the job goes on without it.
func (l *activityLog) flush(ctx context.Context) {
	l.flushing.Lock()
	defer l.flushing.Unlock()
	l.mu.Lock()
	lines := l.pending
	l.pending = nil
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	if len(lines) == 0 {
		return
	}
	err := l.s.v.Store.Update(ctx, func(tx *store.Tx) error {
		for _, ln := range lines {
			if err := l.s.v.Admit.Event(ctx, tx, ln.Time, "ingest.activity", l.src.ID, map[string]any{
				"job": l.job, "attempt": l.attempt, "activity": ln.Kind, "text": ln.Text,
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		l.s.log.Warn("record agent activity", "source", l.src.ID, "job", l.job, "lines", len(lines), "err", err)
	}
}

// close writes what is pending, and a note of the lines past the bound;
// lines added afterwards are dropped.
func (l *activityLog) close(ctx context.Context) {
	l.mu.Lock()
	l.closed = true
	if l.dropped > 0 {
		l.pending = append(l.pending, activityLine{Time: l.s.now(), Kind: "note",
			Text: "…and " + strconv.Itoa(l.dropped) + " more lines of activity, not recorded"})
	}
	l.mu.Unlock()
	l.flush(ctx)
}
