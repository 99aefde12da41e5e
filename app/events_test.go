package app_test

import (
	"slices"
	"testing"

	"cairn"
	"cairn/app"
	"cairn/ingest"
)

func TestApp_Events(t *testing.T) {
	a, ctx, _ := setupIngest(t)
	before, err := a.LastEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.IngestData(ctx, []ingest.Data{{Name: "mills.md", Data: []byte(article)}}, app.IngestOptions{}); err != nil {
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

// TestApp_EventsRefs checks that every move of a ref is an event, in the
// transaction that moves it, whatever route moves it: an admission into
// main, a branch made and deleted, a tag.
func TestApp_EventsRefs(t *testing.T) {
	a, ctx := adminSetup(t)
	before, err := a.LastEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head, err := a.ResolveCommit(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.CommitChanges(ctx, app.ChangesRequest{Base: head.Hash, Message: "add a page",
		Changes: []app.FileEdit{{Path: "notes/new.md", Content: []byte("---\ntitle: New\ntype: note\n---\nNew. [[index]]\n")}}})
	if err != nil || res.Commit == nil {
		t.Fatalf("CommitChanges = %+v, %v; want it admitted", res, err)
	}
	if _, err := a.CreateBranch(ctx, "side", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTag(ctx, "v1", "", "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteBranch(ctx, "side", cairn.Hash{}); err != nil {
		t.Fatal(err)
	}
	evs, err := a.Events(ctx, before, 0)
	if err != nil {
		t.Fatal(err)
	}
	type move struct {
		ref      string
		old, new cairn.Hash
	}
	var got []move
	for _, ev := range evs {
		if ev.Kind != "ref.updated" {
			continue
		}
		d := ev.Fields()
		if d.Principal == "" {
			t.Errorf("event %d: ref.updated of %s names no principal", ev.ID, ev.Subject)
		}
		got = append(got, move{ev.Subject, d.Old, d.New})
	}
	c := res.Commit.Hash
	want := []move{{"heads/main", head.Hash, c}, {"heads/side", cairn.Hash{}, c}, {"tags/v1", cairn.Hash{}, c}, {"heads/side", c, cairn.Hash{}}}
	if !slices.Equal(got, want) {
		t.Errorf("ref.updated events = %v, want %v", got, want)
	}
}
