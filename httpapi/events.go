package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

// hub tells the event streams of one server when the vault's event table
// has grown: one reader polls the newest event's id, and each stream,
// woken, reads what it has not sent from the table itself. So every stream
// sends every event in the table's order, whichever process recorded it,
// and a stream that falls behind only reads more.
type hub struct {
	app  *app.App
	log  *slog.Logger
	poll time.Duration

	mu   sync.Mutex
	last int64
	wake chan struct{} // closed when events newer than last are seen
}

func newHub(a *app.App, log *slog.Logger) *hub {
	return &hub{app: a, log: log, poll: 100 * time.Millisecond, wake: make(chan struct{})}
}

// run polls the newest event until ctx ends.
func (h *hub) run(ctx context.Context) {
	t := time.NewTicker(h.poll)
	defer t.Stop()
	for {
		if id, err := h.app.LastEvent(ctx); err == nil {
			h.mu.Lock()
			if id > h.last {
				h.last = id
				close(h.wake)
				h.wake = make(chan struct{})
			}
			h.mu.Unlock()
		} else if ctx.Err() == nil {
			h.log.Warn("read the newest event", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// changed returns a channel closed when new events are seen.
func (h *hub) changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wake
}

// keepalive is how often a quiet stream sends a comment, so that proxies
// keep it open and a client that went away is noticed.
const keepalive = 15 * time.Second

// eventsIn is what an event stream asks: where to resume, and which kinds.
type eventsIn struct {
	LastEventID string `header:"Last-Event-ID" doc:"The id of the last event the client received: the stream resumes after it (EventSource sends it when it reconnects)."`
	After       string `query:"after" doc:"Resume after this event id (0: from the first event). Default: from now. Last-Event-ID wins when both are given."`
	Kinds       string `query:"kinds" doc:"Only events whose kind starts with one of these, comma-separated (ingest.,ref.updated)."`
}

// cursor returns the id a stream starts after.
func (in *eventsIn) cursor(ctx context.Context, a *app.App) (int64, error) {
	for _, v := range []string{in.LastEventID, in.After} {
		if v == "" {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id < 0 {
			return 0, cairn.Errorf(cairn.EINVALID, "%q is not an event id", v).WithHint("Give the id of the last event received, or 0 for every event.")
		}
		return id, nil
	}
	return a.LastEvent(ctx)
}

func (in *eventsIn) match(kind string) bool {
	if in.Kinds == "" {
		return true
	}
	for _, k := range strings.Split(in.Kinds, ",") {
		if k = strings.TrimSpace(k); k != "" && strings.HasPrefix(kind, k) {
			return true
		}
	}
	return false
}

// eventStream is the route GET /api/v1/events: server-sent events, each
// with the id of the vault's event table, its kind as the event name and
// the event (app.Event) as JSON data. It resumes exactly after
// Last-Event-ID: nothing lost, nothing sent twice, across reconnects and
// server restarts. It ends when the client goes or the server stops.
func (s *Server) eventStream(ctx context.Context, in *eventsIn) (*huma.StreamResponse, error) {
	after, err := in.cursor(ctx, s.app)
	if err != nil {
		return nil, err
	}
	release, err := s.openStream(ctx)
	if err != nil {
		return nil, err
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		defer release()
		r, w := humago.Unwrap(hctx)
		st := newStream(w, s.opts.WriteTimeout, "text/event-stream")
		if err := st.write("retry: 2000\n\n"); err != nil {
			return
		}
		ctx := r.Context()
		ping := time.NewTicker(keepalive)
		defer ping.Stop()
		for {
			changed := s.hub.changed()
			evs, err := s.app.Events(ctx, after, 500)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("event stream: read events", "after", after, "err", err)
					st.write(fmt.Sprintf("event: error\ndata: %s\n\n", mustJSON(problemOf(err))))
				}
				return
			}
			for _, ev := range evs {
				after = ev.ID
				if !in.match(ev.Kind) {
					continue
				}
				if err := st.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Kind, mustJSON(ev))); err != nil {
					return
				}
			}
			if len(evs) == 500 {
				continue
			}
			select {
			case <-changed:
			case <-ping.C:
				if err := st.write(": keepalive\n\n"); err != nil {
					return
				}
			case <-ctx.Done():
				return
			case <-s.stopping:
				st.write(fmt.Sprintf("event: error\ndata: %s\n\n", mustJSON(newProblem(cairn.EUNAVAILABLE, errStopping.Error(),
					"Reconnect with Last-Event-ID once the server is back: the stream resumes where it stopped."))))
				return
			}
		}
	}}, nil
}

// maxStreams bounds the event streams one token holds open at once.
const maxStreams = 16

// openStream counts an event stream of the request's token, refusing one
// past maxStreams (rate_limited); release ends it.
func (s *Server) openStream(ctx context.Context) (release func(), err error) {
	id := ""
	if t := auth.FromContext(ctx); t != nil {
		id = t.ID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams[id] >= maxStreams {
		return nil, newProblem(codeRateLimited, fmt.Sprintf("token %s holds %d event streams open already", id, maxStreams),
			"Close a stream first; one stream carries every kind of event (kinds= filters).")
	}
	s.streams[id]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.streams[id]--; s.streams[id] == 0 {
			delete(s.streams, id)
		}
	}, nil
}

// stream writes a long response: each write extends the write deadline
// and is flushed at once.
type stream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func newStream(w http.ResponseWriter, timeout time.Duration, contentType string) *stream {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (st *stream) write(s string) error {
	st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	if _, err := io.WriteString(st.w, s); err != nil {
		return err
	}
	return st.rc.Flush()
}

// mustJSON encodes v, which is one of the API's own types, on one line.
func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(newProblem(cairn.EINTERNAL, "encode: "+err.Error(), ""))
	}
	return data
}

// eventsPage is a page of the event log.
type eventsPage struct {
	Items []*app.Event `json:"items"`
	// Next is the cursor of the next page: the last event's id (the
	// cursor given when there are none).
	Next int64 `json:"next"`
}

type eventLogIn struct {
	After int64 `query:"after" minimum:"0" doc:"Events after this id (0: from the first)."`
	Limit int   `query:"limit" minimum:"0" maximum:"1000" doc:"At most this many (default 100)."`
}

// eventLog is the route GET /api/v1/events/log: the events after a
// cursor, as JSON pages.
func (s *Server) eventLog(ctx context.Context, in *eventLogIn) (*body[eventsPage], error) {
	evs, err := s.app.Events(ctx, in.After, in.Limit)
	if err != nil {
		return nil, err
	}
	next := in.After
	if len(evs) > 0 {
		next = evs[len(evs)-1].ID
	}
	return &body[eventsPage]{Body: eventsPage{Items: nonNil(evs), Next: next}}, nil
}

// lastEventOut is the newest event's id.
type lastEventOut struct {
	Last int64 `json:"last" doc:"The newest event's id (0: none)"`
}

func (s *Server) lastEvent(ctx context.Context, _ *struct{}) (*body[lastEventOut], error) {
	id, err := s.app.LastEvent(ctx)
	if err != nil {
		return nil, err
	}
	return &body[lastEventOut]{Body: lastEventOut{Last: id}}, nil
}

// nonNil returns xs, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
