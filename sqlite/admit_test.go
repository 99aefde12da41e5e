package sqlite_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/admit"
	"cairn/sqlite"
)

// setupAdmitStorage opens a SQLite database and its admission storage.
func setupAdmitStorage(t *testing.T) (storageDB, admit.Storage) {
	t.Helper()
	db := openSQLite(t)
	return db, sqlite.NewAdmitStorage(db)
}

// newProposal returns a held proposal submitted as key, at a whole
// microsecond (the columns keep nanoseconds; the comparison is exact).
func newProposal(key string) *cairn.Proposal {
	return &cairn.Proposal{
		Key: key, Route: "commit", Branch: "main", Base: cairn.Hash{1}, Tree: cairn.Hash{2},
		Principal: "human:ann", Origin: "person", Status: cairn.ProposalHeld, Verdict: cairn.Hold,
		Findings: []cairn.Finding{{Gate: "review", Rule: "proposed", Verdict: cairn.Hold, Message: "proposed"}},
		Message:  "commit: a change", Log: &cairn.LogEntry{Op: "ingest", Subject: "a.pdf"},
		Source: "abc", Job: 7, Created: time.Unix(1700000000, 123000),
	}
}

// addProposal records p and returns it with its id.
func addProposal(t *testing.T, db storageDB, st admit.Storage, p *cairn.Proposal) *cairn.Proposal {
	t.Helper()
	err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		id, err := st.AddProposal(ctx, tx, p)
		p.ID = id
		return err
	})
	if err != nil {
		t.Fatalf("AddProposal(%s) = %v", p.Key, err)
	}
	return p
}

func TestAdmitStorage_Proposals(t *testing.T) {
	db, st := setupAdmitStorage(t)
	testAdmitStorageProposals(t, db, st)
}

// testAdmitStorageProposals checks the proposals of st, a new storage in
// db, whatever its backend.
func testAdmitStorageProposals(t *testing.T, db storageDB, st admit.Storage) {
	ctx := t.Context()
	a := addProposal(t, db, st, newProposal("commit:a"))
	b := newProposal("commit:b")
	b.Status, b.Verdict, b.Findings, b.Log = cairn.ProposalAdmitted, cairn.Admit, []cairn.Finding{}, nil
	b = addProposal(t, db, st, b)

	t.Run("OK", func(t *testing.T) {
		got, err := st.Proposal(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, got); diff != "" {
			t.Errorf("Proposal(%d) (-want +got):\n%s", a.ID, diff)
		}
		all, err := st.Proposals(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]*cairn.Proposal{b, a}, all); diff != "" {
			t.Errorf("Proposals(all) (-want +got):\n%s", diff)
		}
		held, err := st.Proposals(ctx, cairn.ProposalHeld, 10)
		if err != nil || len(held) != 1 || held[0].ID != a.ID {
			t.Errorf("Proposals(held) = %v, %v, want proposal %d", held, err, a.ID)
		}
		if id, err := st.ProposalOfKey(ctx, "commit:b"); err != nil || id != b.ID {
			t.Errorf("ProposalOfKey(commit:b) = %d, %v, want %d", id, err, b.ID)
		}
		err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			got, err := st.ProposalIn(ctx, tx, b.ID)
			if err == nil && got.Key != b.Key {
				t.Errorf("ProposalIn(%d) = %s, want %s", b.ID, got.Key, b.Key)
			}
			return err
		})
		if err != nil {
			t.Errorf("ProposalIn = %v", err)
		}
	})
	t.Run("Decide", func(t *testing.T) {
		d := *a
		d.Status, d.Verdict, d.Reason, d.Error = cairn.ProposalRejected, cairn.Reject, "no", ""
		d.Decided, d.DecidedBy, d.Commit, d.Result = time.Unix(1700000100, 0), "human:bob", cairn.Hash{3}, cairn.Hash{4}
		if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.DecideProposal(ctx, tx, &d) }); err != nil {
			t.Fatal(err)
		}
		got, err := st.Proposal(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&d, got); diff != "" {
			t.Errorf("Proposal(%d) after DecideProposal (-want +got):\n%s", a.ID, diff)
		}
		if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.SetProposalError(ctx, tx, a.ID, "it broke") }); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Proposal(ctx, a.ID); err != nil || got.Error != "it broke" {
			t.Errorf("Proposal(%d).Error = %v, %v, want it broke", a.ID, got, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := st.Proposal(ctx, 999); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Proposal(999) = %v, want ENOTFOUND", err)
		}
		if _, err := st.ProposalOfKey(ctx, "commit:nothing"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("ProposalOfKey(commit:nothing) = %v, want ENOTFOUND", err)
		}
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			_, err := st.ProposalIn(ctx, tx, 999)
			return err
		})
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("ProposalIn(999) = %v, want ENOTFOUND", err)
		}
		err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			_, err := st.ProposalOfKeyIn(ctx, tx, "commit:nothing")
			return err
		})
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("ProposalOfKeyIn(commit:nothing) = %v, want ENOTFOUND", err)
		}
		missing := newProposal("commit:missing")
		missing.ID = 999
		err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.DecideProposal(ctx, tx, missing) })
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("DecideProposal(999) = %v, want ENOTFOUND", err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			_, err := st.AddProposal(ctx, tx, newProposal("commit:a"))
			return err
		})
		if cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Errorf("AddProposal(commit:a) again = %v, want ECONFLICT", err)
		}
	})
	t.Run("GoesOnAfterConflict", func(t *testing.T) {
		// A caller that expects the conflict writes on in the transaction.
		c := newProposal("commit:c")
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			if _, err := st.AddProposal(ctx, tx, newProposal("commit:a")); cairn.ErrorCode(err) != cairn.ECONFLICT {
				t.Errorf("AddProposal(commit:a) again = %v, want ECONFLICT", err)
			}
			var err error
			c.ID, err = st.AddProposal(ctx, tx, c)
			return err
		})
		if err != nil {
			t.Fatalf("a write after a conflict = %v", err)
		}
		if id, err := st.ProposalOfKey(ctx, "commit:c"); err != nil || id != c.ID {
			t.Errorf("ProposalOfKey(commit:c) = %d, %v, want %d", id, err, c.ID)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		// A transaction of another backend is refused, not misused.
		other := foreignTx{}
		if _, err := st.AddProposal(ctx, other, newProposal("commit:x")); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("AddProposal(foreign tx) = %v, want EINTERNAL", err)
		}
		if _, err := st.ProposalIn(ctx, other, a.ID); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("ProposalIn(foreign tx) = %v, want EINTERNAL", err)
		}
		if err := st.AddEvent(ctx, other, admit.EventRow{Kind: "x"}); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("AddEvent(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}

func TestAdmitStorage_Events(t *testing.T) {
	db, st := setupAdmitStorage(t)
	testAdmitStorageEvents(t, db, st)
}

// testAdmitStorageEvents checks the events and audit rows of st, a new
// storage in db, whatever its backend.
func testAdmitStorageEvents(t *testing.T, db storageDB, st admit.Storage) {
	ctx := t.Context()
	if last, err := st.LastEvent(ctx); err != nil || last != 0 {
		t.Fatalf("LastEvent() of no events = %d, %v, want 0", last, err)
	}
	at := time.Unix(1700000000, 5)
	err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		for _, k := range []string{"source.queued", "ingest.running", "proposal.held"} {
			if err := st.AddEvent(ctx, tx, admit.EventRow{Time: at, Kind: k, Subject: "s", Data: json.RawMessage(`{"n":1}`)}); err != nil {
				return err
			}
		}
		return st.AddAudit(ctx, tx, admit.AuditRow{Time: at, Principal: "human:ann", Action: "admit", Proposal: 1,
			Branch: "main", Commit: cairn.Hash{9}, Detail: json.RawMessage(`{}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	last, err := st.LastEvent(ctx)
	if err != nil || last != 3 {
		t.Fatalf("LastEvent() = %d, %v, want 3", last, err)
	}
	got, err := st.Events(ctx, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []admit.EventRow{
		{ID: 2, Time: at, Kind: "ingest.running", Subject: "s", Data: json.RawMessage(`{"n":1}`)},
		{ID: 3, Time: at, Kind: "proposal.held", Subject: "s", Data: json.RawMessage(`{"n":1}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Events(1, 10) (-want +got):\n%s", diff)
	}
	if got, err := st.Events(ctx, 0, 1); err != nil || len(got) != 1 || got[0].ID != 1 {
		t.Errorf("Events(0, 1) = %v, %v, want event 1", got, err)
	}
	err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		return st.AddEvent(ctx, tx, admit.EventRow{Time: at, Kind: "source.queued", Subject: "other"})
	})
	if err != nil {
		t.Fatal(err)
	}
	about, err := st.EventsAbout(ctx, "other", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	// An event without data has an empty object.
	if diff := cmp.Diff([]admit.EventRow{{ID: 4, Time: at, Kind: "source.queued", Subject: "other", Data: json.RawMessage(`{}`)}}, about); diff != "" {
		t.Errorf("EventsAbout(other, 0, 10) (-want +got):\n%s", diff)
	}
	if got, err := st.EventsAbout(ctx, "s", 1, 1); err != nil || len(got) != 1 || got[0].ID != 2 {
		t.Errorf("EventsAbout(s, 1, 1) = %v, %v, want event 2", got, err)
	}
}
