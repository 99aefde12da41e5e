package app_test

import (
	"testing"

	"cairn"
	"cairn/app"
)

func TestApp_Events(t *testing.T) {
	a, ctx, _ := setupIngest(t)
	before, err := a.LastEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.IngestBytes(ctx, "mills.md", []byte(article), app.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		evs, err := a.Events(ctx, before, 0)
		if err != nil {
			t.Fatal(err)
		}
		byKind := map[string]*app.Event{}
		for i, ev := range evs {
			if i > 0 && ev.ID <= evs[i-1].ID {
				t.Errorf("Events: event %d follows %d; want them in order", ev.ID, evs[i-1].ID)
			}
			byKind[ev.Kind] = ev
		}
		q := byKind["source.queued"]
		if q == nil || q.Source == nil || q.Source.Name != "mills.md" {
			t.Fatalf("Events: source.queued = %+v; want it with its source mills.md", q)
		}
		m := byKind["ingest.merged"]
		if m == nil || m.Proposal == nil || m.Proposal.ID != m.Fields().Proposal {
			t.Fatalf("Events: ingest.merged = %+v; want it with the proposal its data names", m)
		}
		last, err := a.LastEvent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if last != evs[len(evs)-1].ID {
			t.Errorf("LastEvent() = %d, want %d, the last event's id", last, evs[len(evs)-1].ID)
		}
		if more, err := a.Events(ctx, last, 10); err != nil || len(more) != 0 {
			t.Errorf("Events(after the last) = %d, %v; want none", len(more), err)
		}
		if one, err := a.Events(ctx, before, 1); err != nil || len(one) != 1 || one[0].ID != evs[0].ID {
			t.Errorf("Events(limit 1) = %d events, %v; want the first", len(one), err)
		}
	})
	t.Run("ErrCursor", func(t *testing.T) {
		if _, err := a.Events(ctx, -1, 0); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Events(-1) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrLimit", func(t *testing.T) {
		if _, err := a.Events(ctx, 0, 5000); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Events(limit 5000) = %v, want EINVALID", err)
		}
		if _, err := a.Events(ctx, 0, -1); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Events(limit -1) = %v, want EINVALID", err)
		}
	})
}
