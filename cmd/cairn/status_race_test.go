package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestStatus_ListingsRace runs whole-tree statuses as three processes at
// once, each of which may rewrite the status cache and the folders'
// kept listings, while the folder is edited under them — files made,
// removed and moved between folders, most of whose listings are kept —
// and checks after every round that a status made alone then reports
// every change: no status that raced an edit left a listing or a cache
// that hides one. Every few rounds the test waits out the two seconds
// after which a changed folder's listing is kept again, so that kept
// listings go stale in later rounds.
func TestStatus_ListingsRace(t *testing.T) {
	vault := filepath.Join(t.TempDir(), "vault")
	base := map[string]string{}
	var folders []string
	for f := range 12 {
		folders = append(folders, fmt.Sprintf("f%02d", f))
		for i := range 5 {
			base[fmt.Sprintf("f%02d/p%d.md", f, i)] = fmt.Sprintf("page %d of %d\n", i, f)
		}
	}
	writeFiles(t, vault, base)
	must(t, run(t, vault, nil, "init"), "init")
	time.Sleep(2100 * time.Millisecond) // every folder's listing can be kept
	must(t, run(t, vault, nil, "status"), "status")
	must(t, run(t, vault, nil, "status"), "status") // the listings kept

	rng := rand.New(rand.NewPCG(3, 8))
	serial := 0
	edit := func(rng *rand.Rand) {
		f := folders[rng.IntN(len(folders))]
		serial++
		switch rng.IntN(3) {
		case 0:
			p := filepath.Join(vault, f, fmt.Sprintf("new%d.md", serial))
			os.WriteFile(p, fmt.Appendf(nil, "new %d\n", serial), 0o644)
		case 1:
			if m, _ := filepath.Glob(filepath.Join(vault, f, "*.md")); len(m) > 0 {
				os.Remove(m[rng.IntN(len(m))])
			}
		default:
			if m, _ := filepath.Glob(filepath.Join(vault, f, "*.md")); len(m) > 0 {
				to := folders[rng.IntN(len(folders))]
				os.Rename(m[rng.IntN(len(m))], filepath.Join(vault, to, fmt.Sprintf("moved%d.md", serial)))
			}
		}
	}
	rounds := 12
	if testing.Short() {
		rounds = 6
	}
	for round := range rounds {
		for range 1 + rng.IntN(2) {
			edit(rng)
		}
		// Three statuses at once, and an edit while they run.
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Go(func() {
				cmd := exec.Command(cairnBin(t), "status", "--json")
				cmd.Dir, cmd.Env = vault, append(os.Environ(), "CAIRN_USER=tester")
				if out, err := cmd.CombinedOutput(); err != nil {
					errs[i] = fmt.Errorf("%v: %s", err, out)
				}
			})
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		edit(rng)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: a status beside the others: %v", round, err)
			}
		}
		checkStatus(t, vault, base, fmt.Sprint("round ", round))
		if round%4 == 3 {
			time.Sleep(2100 * time.Millisecond) // the changed folders' listings can be kept again
		}
	}
	if fi, err := os.Stat(filepath.Join(vault, ".cairn", "status-1.folders")); err != nil || fi.Size() == 0 {
		t.Errorf("no folder listings were kept: %v", err)
	}
}
