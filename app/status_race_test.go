package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"cairn"
	"cairn/app"
)

// statusChildEnv names the vault a child process of TestStatus_Race works
// on.
const statusChildEnv = "CAIRN_TEST_STATUS_VAULT"

// statusChild runs the whole-tree status of the vault's folder again and
// again, printing each one's changes as a JSON line.
func statusChild() int {
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("child"))
	rounds, _ := strconv.Atoi(os.Getenv("CAIRN_TEST_STATUS_ROUNDS"))
	out := json.NewEncoder(os.Stdout)
	for range rounds {
		a, err := app.Open(ctx, os.Getenv(statusChildEnv), nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		st, err := a.Status(ctx)
		a.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var lines []string
		for _, c := range st.Changes {
			lines = append(lines, string(c.Kind)+" "+c.Path)
		}
		out.Encode(lines)
	}
	return 0
}

// TestStatus_Race runs processes that take the whole-tree status of one
// folder at once, each reading and rewriting the status cache the others
// write, over phases in which the folder is edited and committed (so the
// cache must follow a new base): every status of every process is the
// folder's, as the status of its files one by one says.
func TestStatus_Race(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("tester"))
	dir := filepath.Join(t.TempDir(), "vault")
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		write(fmt.Sprintf("notes/%d/p%d.md", i%7, i), fmt.Sprintf("# P%d\n", i))
	}
	a, err := initApp(t, ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Adopt(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	const children, rounds = 3, 8
	for phase := range 5 {
		// Edits of this phase: one changed, one new, one gone.
		write(fmt.Sprintf("notes/%d/p%d.md", phase, phase*10), fmt.Sprintf("# P changed in phase %d\n", phase))
		write(fmt.Sprintf("notes/new/n%d.md", phase), "# new\n")
		gone := (phase + 3) % 7
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf("notes/%d/p%d.md", gone, gone+7*(15+phase)))); err != nil {
			t.Fatal(err)
		}
		a, err := app.Open(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for d := range 7 {
			st, err := a.Status(ctx, fmt.Sprintf("notes/%d", d))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range st.Changes {
				want = append(want, string(c.Kind)+" "+c.Path)
			}
		}
		st, err := a.Status(ctx, "notes/new")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range st.Changes {
			want = append(want, string(c.Kind)+" "+c.Path)
		}
		slices.Sort(want)
		a.Close()
		reports := runChildren[[]string](t, children, func(int) []string {
			return []string{statusChildEnv + "=" + dir, "CAIRN_TEST_STATUS_ROUNDS=" + strconv.Itoa(rounds)}
		})
		for c, rs := range reports {
			if len(rs) != rounds {
				t.Errorf("phase %d: child %d reported %d statuses, want %d", phase, c, len(rs), rounds)
			}
			for i, got := range rs {
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("phase %d: child %d, status %d = %q, want %q", phase, c, i, got, want)
				}
			}
		}
		if phase%2 == 1 {
			// A commit moves the base: the next phase's caches follow it.
			a, err := app.Open(ctx, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.CommitEdits(ctx, app.CommitEditsRequest{Message: fmt.Sprint("phase ", phase)}); err != nil {
				t.Fatal(err)
			}
			a.Close()
		}
	}
}
