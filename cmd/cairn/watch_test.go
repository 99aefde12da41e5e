package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStatus_Watched runs cairn status as a separate process, many
// rounds, while a long-running process watches the folder — cairn worker
// (status opens the vault itself and reads the worker's journal) and cairn
// serve (status goes through the server) — after random edits, touches,
// renames and deletions made between the rounds, and checks every answer
// against the folder as the test reads it. The statuses must have come
// from the journal: its last status is recorded at the journal's epoch.
// In "both", a worker and a server run at once (one of them watches: the
// journal's lock decides) and the worker is killed halfway; if it was the
// one watching, the server takes the watch over.
func TestStatus_Watched(t *testing.T) {
	for _, mode := range []string{"worker", "serve", "both"} {
		t.Run(mode, func(t *testing.T) {
			vault := filepath.Join(t.TempDir(), "vault")
			base := map[string]string{"index.md": "# Home\n", "notes/a.md": "a\n", "notes/deep/b.md": "b\n"}
			writeFiles(t, vault, base)
			must(t, run(t, vault, nil, "init"), "init")
			var worker *exec.Cmd
			if mode != "serve" {
				worker = exec.Command(cairnBin(t), "worker")
				worker.Dir = vault
				worker.Env = append(os.Environ(), "CAIRN_USER=tester")
				var out bytes.Buffer
				worker.Stdout, worker.Stderr = &out, &out
				if err := worker.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { worker.Process.Kill(); worker.Wait() })
			}
			watching := func() {
				waitUntil(t, 30*time.Second, func() bool {
					m, _ := filepath.Glob(filepath.Join(vault, ".cairn", "status-*.watch"))
					return len(m) > 0
				})
			}
			if mode == "both" {
				watching() // the worker watches; the server waits for the lock
			}
			if mode != "worker" {
				startServe(t, vault)
			}
			watching()
			journalEpoch := func() string {
				t.Helper()
				journal, err := os.ReadFile(filepath.Join(vault, ".cairn", "status-1.watch"))
				if err != nil {
					t.Fatal(err)
				}
				epoch, _, _ := strings.Cut(strings.TrimPrefix(string(journal), "cairn-watch-1 "), "\n")
				return epoch
			}
			var workerEpoch string
			rng := rand.New(rand.NewPCG(5, 9))
			names := []string{"index.md", "notes/a.md", "notes/c.md", "notes/deep/b.md", "other/d.md"}
			rounds := 30
			if testing.Short() {
				rounds = 10
			}
			for round := range rounds {
				if mode == "both" && round == rounds/2 {
					workerEpoch = journalEpoch()
					worker.Process.Kill()
					worker.Wait()
					time.Sleep(6 * time.Second) // the server takes the watch over within 5 s
				}
				for range 1 + rng.IntN(3) {
					p := filepath.Join(vault, names[rng.IntN(len(names))])
					switch rng.IntN(5) {
					case 0:
						os.Remove(p)
					case 1: // touched
						if data, err := os.ReadFile(p); err == nil {
							os.WriteFile(p, data, 0o644)
						}
					case 2:
						q := filepath.Join(vault, names[rng.IntN(len(names))])
						os.MkdirAll(filepath.Dir(q), 0o755)
						os.Rename(p, q)
					default:
						os.MkdirAll(filepath.Dir(p), 0o755)
						os.WriteFile(p, fmt.Appendf(nil, "round %d %d\n", round, rng.IntN(3)), 0o644)
					}
				}
				checkStatus(t, vault, base, fmt.Sprint("round ", round))
				if round%10 == 9 {
					must(t, run(t, vault, nil, "commit", "-m", "round"), "commit")
					base = readTree(t, vault)
				}
			}
			epoch := journalEpoch()
			if mode == "both" && epoch == workerEpoch {
				t.Errorf("the server did not take the watch over from the killed worker (journal epoch %q still)", epoch)
			}
			var last struct{ Epoch string }
			data, err := os.ReadFile(filepath.Join(vault, ".cairn", "status-1.last"))
			if err != nil || json.Unmarshal(data, &last) != nil || last.Epoch != epoch {
				t.Errorf("the last status was not made from the journal (epoch %q, journal's %q): %v", last.Epoch, epoch, err)
			}
		})
	}
}

// checkStatus runs a whole-tree cairn status in vault and fails the test,
// naming what, unless it is the folder's changes against base.
func checkStatus(t *testing.T, vault string, base map[string]string, what string) {
	t.Helper()
	r := run(t, vault, nil, "status", "--json")
	must(t, r, "status")
	var got struct {
		Items []struct{ Path, Kind string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%s: status --json: %v\n%s", what, err, r.stdout)
	}
	var gotS []string
	for _, it := range got.Items {
		gotS = append(gotS, it.Kind+" "+it.Path)
	}
	if want := folderChanges(t, vault, base); !slices.Equal(want, gotS) {
		t.Fatalf("%s: status = %q, want %q", what, gotS, want)
	}
}

// folderChanges is the folder's status against base, as "kind path" by
// path.
func folderChanges(t *testing.T, dir string, base map[string]string) []string {
	t.Helper()
	disk := readTree(t, dir)
	var out []string
	for p, data := range disk {
		old, ok := base[p]
		switch {
		case !ok:
			out = append(out, "added "+p)
		case old != data:
			out = append(out, "modified "+p)
		}
	}
	for p := range base {
		if _, ok := disk[p]; !ok {
			out = append(out, "deleted "+p)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(a[strings.Index(a, " ")+1:], b[strings.Index(b, " ")+1:])
	})
	return out
}

func waitUntil(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v", d)
		}
	}
}
