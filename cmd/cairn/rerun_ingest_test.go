package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cairn/sqlite"
)

// TestIngestAgain ingests sources that are still queued (or running under
// a dead process) after cairn ingest was killed: ingesting them again with
// --detach leaves them queued and says that a worker runs them; ingesting
// them again without it runs their jobs to the end.
func TestIngestAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	for _, point := range []string{"ingest:enqueued", "ingest:running"} {
		t.Run(strings.ReplaceAll(point, ":", "-"), func(t *testing.T) {
			t.Parallel()
			_, vault, sources := ingestVault(t, "")
			r := run(t, vault, []string{"CAIRN_CRASH_AT=" + point}, append([]string{"ingest"}, sources...)...)
			if r.signal != syscall.SIGKILL {
				t.Fatalf("cairn ingest was not killed at %s: exit %d\n%s%s", point, r.code, r.stdout, r.stderr)
			}
			d := run(t, vault, nil, append([]string{"ingest", "--detach"}, sources...)...)
			must(t, d, "ingest --detach again")
			if !strings.Contains(d.stdout, "cairn worker") {
				t.Errorf("ingest --detach of sources still queued does not say a worker runs them:\n%s", d.stdout)
			}
			for _, s := range sourcesOf(t, vault) {
				if s.Status != "queued" && s.Status != "running" {
					t.Errorf("after ingest --detach again, %s is %s", s.Name, s.Status)
				}
			}
			must(t, run(t, vault, nil, append([]string{"ingest"}, sources...)...), "ingest again")
			accounted(t, vault, sources, "merged")
		})
	}
}

// TestIngestAgain_JobGone ingests again a source whose job is gone: there
// is nothing to wait for, so the command exits 1 with a hint, at once.
func TestIngestAgain_JobGone(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	_, vault, sources := ingestVault(t, "")
	sources = sources[:1]
	r := run(t, vault, []string{"CAIRN_CRASH_AT=ingest:enqueued"}, "ingest", sources[0])
	if r.signal != syscall.SIGKILL {
		t.Fatalf("cairn ingest was not killed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(vault, ".cairn", "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Write().Exec(`DELETE FROM river_job`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	again := run(t, vault, nil, "ingest", sources[0])
	if again.code != exitRefused || !strings.Contains(again.stdout, "cairn sources retry") {
		t.Errorf("ingest of a queued source whose job is gone: exit %d, want %d with a hint\n%s%s", again.code, exitRefused, again.stdout, again.stderr)
	}
	must(t, run(t, vault, nil, "sources", "retry", filepath.Base(sources[0])), "sources retry")
	work(t, vault)
	accounted(t, vault, sources, "merged")
}

// TestIngestSameContentTwice gives one call the same content twice: one
// source, merged, exit 0; the copy is skipped and not taken for a source
// left behind by its job.
func TestIngestSameContentTwice(t *testing.T) {
	root, vault, sources := ingestVault(t, "")
	data, err := os.ReadFile(sources[0])
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(root, "copy.md")
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, vault, nil, "ingest", sources[0], cp)
	if r.code != 0 || !strings.Contains(r.stdout, "Sources: 1 merged.") || strings.Contains(r.stdout, "nothing will run it") {
		t.Errorf("ingest of a file and its copy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	accounted(t, vault, sources[:1], "merged")
}
