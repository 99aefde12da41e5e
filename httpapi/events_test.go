package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/app"
)

// sse is one server-sent event as a client reads it.
type sse struct {
	id    int64
	event string
	data  string
}

// stream reads server-sent events from the API's event stream.
type stream struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan sse
}

// subscribe opens the event stream at query (after=…, kinds=…) with
// Last-Event-ID lastID when it is not empty.
func (e *env) subscribe(query, lastID string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/api/v1/events"+query, nil)
	req.Header.Set("Authorization", "Bearer "+e.owner)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		e.t.Fatalf("GET /api/v1/events%s = %d %s", query, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &stream{t: e.t, cancel: cancel, events: make(chan sse, 1000)}
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" || ev.data != "" {
					s.events <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "id: "):
				ev.id, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	e.t.Cleanup(cancel)
	return s
}

// next returns the next event, failing the test after 10 seconds.
func (s *stream) next() sse {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10s")
	}
	return sse{}
}

// commit changes a page of main through the application layer.
func (e *env) commit(path, content string) {
	e.t.Helper()
	res, err := e.app.CommitChanges(e.ctx, app.ChangesRequest{Base: e.head(), Message: "edit " + path,
		Changes: []app.FileEdit{{Path: path, Content: []byte(content)}}})
	if err != nil || res.Commit == nil {
		e.t.Fatalf("CommitChanges(%s) = %+v, %v", path, res, err)
	}
}

// TestServer_Events: the stream sends every event of the table, in order,
// each with its id, kind and the event as data; a client that reconnects
// with Last-Event-ID gets exactly what followed, after a restart of the
// server too; kinds filters.
func TestServer_Events(t *testing.T) {
	e := setup(t)
	all, err := e.app.Events(t.Context(), 0, 1000)
	if err != nil || len(all) == 0 {
		t.Fatalf("Events = %d, %v", len(all), err)
	}
	s := e.subscribe("?after=0", "")
	for _, want := range all {
		got := s.next()
		var ev app.Event
		if err := json.Unmarshal([]byte(got.data), &ev); err != nil {
			t.Fatalf("event %d: data %q: %v", got.id, got.data, err)
		}
		if got.id != want.ID || got.event != want.Kind || ev.ID != want.ID || ev.Subject != want.Subject {
			t.Fatalf("event = id %d %s %+v, want %d %s", got.id, got.event, ev, want.ID, want.Kind)
		}
	}
	last := all[len(all)-1].ID
	// Live: a commit arrives as it happens.
	e.commit("notes/a.md", "---\ntitle: A\ntype: note\n---\nlive\n")
	if got := s.next(); got.event != "ref.updated" && got.event != "proposal.admitted" {
		t.Errorf("after a commit the stream sent %s, want the commit's events", got.event)
	}
	s.cancel()

	// Reconnected after the last event seen before the commit: exactly
	// what followed, though the server restarted meanwhile.
	e.commit("notes/b.md", "---\ntitle: B\ntype: note\n---\nwhile away\n")
	e.stop()
	e.commit("notes/a.md", "---\ntitle: A\ntype: note\n---\nwhile down\n")
	e.serve()
	want, err := e.app.Events(t.Context(), last, 1000)
	if err != nil {
		t.Fatal(err)
	}
	s = e.subscribe("", strconv.FormatInt(last, 10))
	for _, w := range want {
		if got := s.next(); got.id != w.ID {
			t.Fatalf("resumed after %d: event %d, want %d (nothing lost or repeated)", last, got.id, w.ID)
		}
	}
	s.cancel()

	// Only the kinds asked for; without a cursor, only what happens next.
	s = e.subscribe("?kinds=ref.", "")
	e.commit("notes/b.md", "---\ntitle: B\ntype: note\n---\nfiltered\n")
	if got := s.next(); got.event != "ref.updated" || !strings.Contains(got.data, "heads/main") {
		t.Errorf("kinds=ref. sent %s %s, want main's ref.updated", got.event, got.data)
	}

	// The server stopping ends the stream with a problem saying so.
	e.stop()
	e.stop = func() {}
	got := s.next()
	if got.event != "error" || !strings.Contains(got.data, "unavailable") {
		t.Errorf("when the server stops the stream sent %s %s, want an error event", got.event, got.data)
	}
}

// TestServer_EventsBadCursor: a cursor that is not an event id is a 400
// problem, and changes nothing.
func TestServer_EventsBadCursor(t *testing.T) {
	e := setup(t)
	for _, q := range []string{"?after=x", "?after=-4"} {
		code, body, _ := e.do(http.MethodGet, "/api/v1/events"+q, e.owner, "", nil)
		if code != http.StatusBadRequest {
			t.Errorf("GET /api/v1/events%s = %d %s, want 400", q, code, body)
		}
		problem(t, q, body)
	}
	code, body, _ := e.do(http.MethodGet, "/api/v1/events", e.owner, "", nil, "Last-Event-ID", "yesterday")
	if code != http.StatusBadRequest {
		t.Errorf("GET /api/v1/events with Last-Event-ID yesterday = %d %s, want 400", code, body)
	}
}
