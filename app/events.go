package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/agent"
	"cairn/ingest"
)

// Event is one thing that happened in the vault, as recorded in its
// events table: a source queued or failed ("source.*"), a source's job
// running, what its agent does, or its proposal decided ("ingest.*"), a
// proposal decided ("proposal.*"), a branch or tag made, moved or deleted
// ("ref.updated", whoever moved it and by whatever route). Events are
// numbered in the order they were recorded.
type Event struct {
	ID      int64           `json:"id"`
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"`
	Subject string          `json:"subject"` // a source's id, a proposal's, or a ref's name (heads/main)
	Data    json.RawMessage `json:"data"`
	// Source is the source a source.* or ingest.* event is about, without
	// its history; nil when it is not recorded.
	Source *ingest.Source `json:"source,omitempty"`
	// Proposal is the proposal an ingest.* event's data names; nil when it
	// names none or it is not recorded.
	Proposal *cairn.Proposal `json:"proposal,omitempty"`
}

// EventData are the fields an event's data may hold.
type EventData struct {
	Job      int64  `json:"job"`
	Attempt  int    `json:"attempt"`
	Agent    string `json:"agent"`
	Mode     string `json:"mode"`
	Proposal int64  `json:"proposal"`
	Error    string `json:"error"`
	Hint     string `json:"hint"`
	// Activity and Text are one line of what an agent did
	// (ingest.activity): its kind (file, text, note) and its clean text.
	Activity string `json:"activity"`
	Text     string `json:"text"`
	// Old and New are a ref's values before and after (ref.updated; zero:
	// it did not exist, or was deleted); Principal moved it, saying
	// Message.
	Old       cairn.Hash      `json:"old"`
	New       cairn.Hash      `json:"new"`
	Principal cairn.Principal `json:"principal"`
	Message   string          `json:"message"`
}

// Fields decodes the event's data; fields it does not hold are zero.
func (e *Event) Fields() EventData {
	var d EventData
	json.Unmarshal(e.Data, &d) // data of another shape leaves d zero
	return d
}

// activityBytes bounds a line of an agent's activity as Describe gives it.
const activityBytes = 200

// Describe says in a line, for people, what an ingest's event is: a job
// running ("running (claude agent, job 3, attempt 2)"), a line of its
// agent's activity ("wrote concepts/x.md", "called search …", "used …"),
// or how it ended ("merged (proposal 4): summary", "held for review as
// proposal 4 — deletion/deletion", "rejected (proposal 4) — …", "failed:
// why"). An agent's activity is clean text (agent.Clean): no escape
// sequences, control or invisible characters, cut at a whole character.
// "" for the events that say nothing more to people.
func (e *Event) Describe() string {
	d := e.Fields()
	switch e.Kind {
	case "ingest.running":
		again := ""
		if d.Attempt > 1 {
			again = fmt.Sprintf(", attempt %d", d.Attempt)
		}
		if d.Mode != "" {
			again += ", " + d.Mode
		}
		return fmt.Sprintf("running (%s agent, job %d%s)", d.Agent, d.Job, again)
	case "ingest.activity":
		text := agent.Clean(d.Text, activityBytes)
		if text == "" {
			return ""
		}
		switch d.Activity {
		case "file":
			text = "wrote " + text
		case "tool":
			text = "called " + text
		case "usage":
			text = "used " + text
		case "error":
			text = "error: " + text
		}
		return text
	case "ingest.merged":
		summary := ""
		if e.Proposal != nil {
			summary = ": " + e.Proposal.Summary
		}
		return fmt.Sprintf("merged (proposal %d)%s", d.Proposal, summary)
	case "ingest.held":
		why := ""
		if e.Proposal != nil {
			why = " — " + HeldReasons(e.Proposal.Findings)
		}
		return fmt.Sprintf("held for review as proposal %d%s", d.Proposal, why)
	case "ingest.rejected":
		why := ""
		if e.Proposal != nil {
			why = " — " + HeldReasons(e.Proposal.Findings)
		}
		return fmt.Sprintf("rejected (proposal %d)%s", d.Proposal, why)
	case "ingest.failed":
		return "failed: " + d.Error
	}
	return ""
}

// HeldReasons says in a few words why a proposal was not admitted: the
// gate and rule of each finding that did not admit it, once each.
func HeldReasons(fs []cairn.Finding) string {
	seen := map[string]bool{}
	var parts []string
	for _, f := range fs {
		if f.Verdict == cairn.Admit {
			continue
		}
		k := f.Gate + "/" + f.Rule
		if seen[k] {
			continue
		}
		seen[k] = true
		parts = append(parts, k)
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}

// maxEvents is the most events one call of Events returns.
const maxEvents = 1000

// Events returns the events recorded after the event numbered after,
// oldest first, at most limit (default 100, at most 1000): pass the last
// ID returned to read on. A negative cursor or limit, or a limit over
// 1000, is EINVALID. Reading events needs no principal.
func (a *App) Events(ctx context.Context, after int64, limit int) ([]*Event, error) {
	switch {
	case after < 0:
		return nil, cairn.Errorf(cairn.EINVALID, "event cursor %d is negative", after).
			WithHint("Start from 0, or from the id of the last event read.")
	case limit < 0 || limit > maxEvents:
		return nil, cairn.Errorf(cairn.EINVALID, "at most %d events are read at once, not %d", maxEvents, limit).
			WithHint("Give a limit from 1 to 1000, or 0 for 100.")
	}
	if limit == 0 {
		limit = 100
	}
	rows, err := a.v.Admit.Events(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	return a.events(ctx, rows), nil
}

// events returns the event rows as events, each with the source and the
// proposal it is about when they are recorded.
func (a *App) events(ctx context.Context, rows []admit.EventRow) []*Event {
	out := make([]*Event, 0, len(rows))
	sources := map[string]*ingest.Source{} // an agent's activity names its source many times
	for _, r := range rows {
		ev := &Event{ID: r.ID, Time: r.Time, Kind: r.Kind, Subject: r.Subject, Data: r.Data}
		if strings.HasPrefix(r.Kind, "source.") || strings.HasPrefix(r.Kind, "ingest.") {
			src, ok := sources[r.Subject]
			if !ok || r.Kind != "ingest.activity" {
				if s, err := a.ingest.Get(ctx, r.Subject); err == nil {
					s.History = nil
					src = s
				}
				sources[r.Subject] = src
			}
			ev.Source = src
		}
		if id := ev.Fields().Proposal; id != 0 && strings.HasPrefix(r.Kind, "ingest.") {
			if p, err := a.v.Admit.Get(ctx, id); err == nil {
				ev.Proposal = p
			}
		}
		out = append(out, ev)
	}
	return out
}

// LastEvent returns the id of the newest event recorded (0 when there is
// none): the cursor from which Events reports only what happens next.
func (a *App) LastEvent(ctx context.Context) (int64, error) {
	return a.v.Admit.LastEvent(ctx)
}

// follow reports every event after *after to onEvent (which may be nil),
// every 100ms, until done reports true (the events recorded by then
// reported too) or ctx ends (ctx's error). *after is the last event
// reported.
func (a *App) follow(ctx context.Context, after *int64, onEvent func(*Event), done func() (bool, error)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := a.report(ctx, after, onEvent); err != nil {
			return err
		}
		ok, err := done()
		if err != nil || ok {
			if err == nil {
				err = a.report(ctx, after, onEvent)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// report reports the events after *after, 500 at a time, and moves *after
// on.
func (a *App) report(ctx context.Context, after *int64, onEvent func(*Event)) error {
	evs, err := a.Events(ctx, *after, 500)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		*after = ev.ID
		if onEvent != nil {
			onEvent(ev)
		}
	}
	return nil
}
