package gitio_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"cairn/gitio"
)

// benchRepo makes a git repository of commits commits, each of which adds
// or edits perCommit Markdown files of about 1.5 KB among a pool of
// 20×perCommit, through one git fast-import.
func benchRepo(b testing.TB, commits, perCommit int) *gitRepo {
	b.Helper()
	r := newGitRepo(b)
	rng := rand.New(rand.NewPCG(1, 2))
	pool := 20 * perCommit
	var s strings.Builder
	for c := range commits {
		msg := fmt.Sprintf("Commit %d", c)
		when := epoch.Unix() + int64(c)*60
		fmt.Fprintf(&s, "commit refs/heads/main\nauthor Ada <ada@example.com> %d +0000\ncommitter Ada <ada@example.com> %d +0000\ndata %d\n%s\n",
			when, when, len(msg), msg)
		for range perCommit {
			n := rng.IntN(pool)
			body := fmt.Sprintf("# Note %d\n\nEdited in commit %d.\n\n%s\n", n, c, strings.Repeat("Some words about the topic. ", 50))
			fmt.Fprintf(&s, "M 100644 inline notes/%02d/note-%d.md\ndata %d\n%s\n", n%37, n, len(body), body)
		}
		s.WriteString("\n")
	}
	s.WriteString("done\n")
	runGit(b, r.dir, gitEnv(epoch), s.String(), "fast-import", "--quiet", "--done")
	return r
}

func BenchmarkImportHistory(b *testing.B) {
	const commits, perCommit = 200, 50
	r := benchRepo(b, commits, perCommit)
	n := 0
	for b.Loop() {
		b.StopTimer()
		s := newStore(b)
		b.StartTimer()
		res, err := gitio.ImportHistory(b.Context(), s, r.dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		n += res.Commits
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commits/s")
	b.ReportMetric(float64(n*perCommit)/b.Elapsed().Seconds(), "files/s")
}

func BenchmarkExportGit(b *testing.B) {
	const commits, perCommit = 200, 50
	r := benchRepo(b, commits, perCommit)
	s := newStore(b)
	if _, err := gitio.ImportHistory(b.Context(), s, r.dir, nil); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		if _, err := gitio.ExportGit(b.Context(), s, filepath.Join(b.TempDir(), "export"), nil); err != nil {
			b.Fatal(err)
		}
		n += commits
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commits/s")
}
