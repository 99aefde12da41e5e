package app_test

import (
	"path/filepath"
	"testing"
	"time"

	"cairn"
	"cairn/app"
	"cairn/ingest"
	"cairn/sqlite/sqldurable"
)

func TestApp_Jobs(t *testing.T) {
	a, ctx, _ := setupIngest(t)
	res, err := a.IngestData(ctx, []ingest.Data{{Name: "mills.md", Data: []byte(article)}}, app.IngestOptions{Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	src := res.Files[0].Source
	t.Run("List", func(t *testing.T) {
		jobs, err := a.Jobs(ctx, app.JobFilter{States: []string{app.JobQueued}})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 || jobs[0].ID != src.Job || jobs[0].Source != src.ID || jobs[0].Name != "mills.md" {
			t.Fatalf("Jobs(queued) = %d jobs; want job %d of mills.md", len(jobs), src.Job)
		}
		if jobs, err := a.Jobs(ctx, app.JobFilter{States: []string{app.JobCompleted}}); err != nil || len(jobs) != 0 {
			t.Errorf("Jobs(completed) = %d jobs, %v; want none", len(jobs), err)
		}
	})
	t.Run("Show", func(t *testing.T) {
		j, err := a.Job(ctx, src.Job)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != app.JobQueued || j.Name != "mills.md" {
			t.Errorf("Job(%d) = %s of %q, want queued of mills.md", src.Job, j.State, j.Name)
		}
	})
	t.Run("ErrState", func(t *testing.T) {
		if _, err := a.Jobs(ctx, app.JobFilter{States: []string{"bogus"}}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Jobs(state bogus) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrLimit", func(t *testing.T) {
		if _, err := a.Jobs(ctx, app.JobFilter{Limit: -1}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Jobs(limit -1) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrBadID", func(t *testing.T) {
		if _, err := a.Job(ctx, 0); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Job(0) = %v, want EINVALID", err)
		}
		if _, err := a.CancelJob(ctx, -3); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("CancelJob(-3) = %v, want EINVALID", err)
		}
		if _, err := a.RetryJob(ctx, 0); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("RetryJob(0) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := a.Job(ctx, 9999); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Job(9999) = %v, want ENOTFOUND", err)
		}
		if _, err := a.RetryJob(ctx, 9999); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("RetryJob(9999) = %v, want ENOTFOUND", err)
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		if _, err := a.CancelJob(t.Context(), src.Job); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
			t.Errorf("CancelJob(no principal) = %v, want EUNAUTHORIZED", err)
		}
		if _, err := a.RetryJob(t.Context(), src.Job); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
			t.Errorf("RetryJob(no principal) = %v, want EUNAUTHORIZED", err)
		}
		if j, err := a.Job(ctx, src.Job); err != nil || j.State != app.JobQueued {
			t.Errorf("Job(%d) after refused changes = %v, %v; want it still queued", src.Job, j, err)
		}
	})
	t.Run("CancelRetryRun", func(t *testing.T) {
		j, err := a.CancelJob(ctx, src.Job)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != app.JobCancelled {
			t.Errorf("CancelJob(%d) = %s, want cancelled", src.Job, j.State)
		}
		if s, err := a.Source(ctx, src.ID); err != nil || s.Status != ingest.Failed {
			t.Fatalf("Source after CancelJob = %v, %v; want failed", s, err)
		}
		j, err = a.RetryJob(ctx, src.Job)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != app.JobQueued || j.Source != src.ID {
			t.Errorf("RetryJob(%d) = job %d %s of %.12s; want a queued job of %.12s", src.Job, j.ID, j.State, j.Source, src.ID)
		}
		var started string
		if err := a.RunWorker(ctx, app.WorkerOptions{Drain: true, Started: func(id string) { started = id }}); err != nil {
			t.Fatal(err)
		}
		if started == "" {
			t.Errorf("RunWorker did not say it started")
		}
		if s, err := a.Source(ctx, src.ID); err != nil || s.Status != ingest.Merged {
			t.Errorf("Source after RunWorker(drain) = %v, %v; want merged", s, err)
		}
		if idle, err := a.Idle(ctx); err != nil || !idle {
			t.Errorf("Idle after RunWorker(drain) = %v, %v; want true", idle, err)
		}
	})
}

func TestApp_StartWorker(t *testing.T) {
	a, ctx, _ := setupIngest(t)
	w, err := a.StartWorker(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID() == "" {
		t.Errorf("Worker.ID() is empty")
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := w.Stop(ctx); err != nil {
		t.Errorf("Stop again: %v, want nil", err)
	}
}

// TestApp_CloseStopsWorker checks that closing an App whose worker was not
// stopped stops it: its record leaves the workers table, so no rescue has
// to wait for its heartbeat to go stale.
func TestApp_CloseStopsWorker(t *testing.T) {
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada"))
	dir := filepath.Join(t.TempDir(), "vault")
	a, err := initApp(t, ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := a.StartWorker(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close with a worker running: %v", err)
	}
	b, err := app.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	workers, err := sqldurable.New(b.Vault().DB).Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range workers {
		if rec.ID == w.ID() {
			t.Errorf("worker %s is still recorded after Close", w.ID())
		}
	}
}

// TestApp_WorkerAndIngest runs an ingest's jobs in a process whose worker
// runs: the ingest's end does not stop the worker, which then runs a job
// queued later; and an ingest after another starts the queue again.
func TestApp_WorkerAndIngest(t *testing.T) {
	a, ctx, in := setupIngest(t)
	first, err := a.Ingest(ctx, []string{writeFile(t, in, "mills.md", article)}, app.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Ingest(ctx, []string{writeFile(t, in, "presses.md", "# Presses\n\nVenice had a hundred presses by 1500.\n")}, app.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*app.IngestResult{first, second} {
		if f := res.Files[0]; f.Source.Status != ingest.Merged {
			t.Fatalf("Ingest(%s) = %s, want merged", f.File, f.Source.Status)
		}
	}
	w, err := a.StartWorker(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	if _, err := a.Ingest(ctx, []string{writeFile(t, in, "ink.md", "# Ink\n\nPrinters mixed lamp black with linseed oil.\n")}, app.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.IngestData(ctx, []ingest.Data{{Name: "type.md", Data: []byte("# Type\n\nLetters were cast in a hand mould.\n")}}, app.IngestOptions{Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Files[0].Source.ID
	after, err := a.LastEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The worker decides the source: wait for its event.
	deadline := time.Now().Add(30 * time.Second)
	for {
		src, err := a.Source(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if src.Status == ingest.Merged {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker left type.md %s for 30s after an ingest ended; want it merged", src.Status)
		}
		evs, err := a.Events(ctx, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].ID
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
