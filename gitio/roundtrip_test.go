package gitio_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/gitio"
)

// ident is a git identity with its date, as GIT_AUTHOR_* takes them.
type ident struct{ name, email, date string }

// commitAs commits what is staged with the given author and committer.
func (r *gitRepo) commitAs(msg string, author, committer ident) string {
	r.t.Helper()
	var env []string
	for _, kv := range gitEnv(r.date()) {
		if !strings.HasPrefix(kv, "GIT_AUTHOR_") && !strings.HasPrefix(kv, "GIT_COMMITTER_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GIT_AUTHOR_NAME="+author.name, "GIT_AUTHOR_EMAIL="+author.email, "GIT_AUTHOR_DATE="+author.date,
		"GIT_COMMITTER_NAME="+committer.name, "GIT_COMMITTER_EMAIL="+committer.email, "GIT_COMMITTER_DATE="+committer.date)
	runGit(r.t, r.dir, env, msg, "commit", "--quiet", "--allow-empty", "--allow-empty-message", "--no-verify", "-F", "-")
	r.n++
	return r.git("rev-parse", "HEAD")
}

// authoredRepo is a history by several people, in several time zones,
// committed by others than their authors, with long subjects, subjects of
// several lines, bodies of several paragraphs and trailers of their own.
func authoredRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := newGitRepo(t)
	ada := ident{"Ada Lovelace", "ada@example.org", "2024-03-01T09:00:00+0530"}
	jose := ident{"José Núñez", "jose.nunez@example.es", "2024-03-02T10:30:00-0300"}
	bot := ident{"Build Bot", "bot@ci.example", "2024-03-03T00:00:00+0000"}
	noEmail := ident{"Nobody", "", "2024-03-04T12:00:00+1245"}
	long := "A subject far longer than anyone should write, " + strings.Repeat("and it goes on, ", 20) + "until it ends"
	steps := []struct {
		files             map[string]string
		msg               string
		author, committer ident
	}{
		{map[string]string{"a.md": "# A\n"}, long + "\n", ada, ada},
		{map[string]string{"b.md": "# B\n"}, "Two lines\nof subject\n\nA body of one paragraph\nover two lines.\n\nAnd a second one.\n", jose, bot},
		{map[string]string{"a.md": "# A, again\n"}, "Fix the thing\n\nSigned-off-by: Ada Lovelace <ada@example.org>\nCo-authored-by: José Núñez <jose.nunez@example.es>\n", ada, jose},
		{map[string]string{"c.md": "# C\n"}, "short\n", noEmail, bot},
		{nil, "An empty commit, with a body\n\n    indented, like code\n\tand a tab\n", bot, ada},
		{map[string]string{"d.md": "# D\n"}, "", ada, ada},
	}
	for _, st := range steps {
		r.write(st.files)
		r.git("add", "--all")
		r.commitAs(st.msg, st.author, st.committer)
	}
	return r
}

// gitLog is what git log says of each commit's people, dates and message.
func gitLog(r *gitRepo, rev string) string {
	r.t.Helper()
	return r.git("log", "--format=%an %ae %ad %s%n%b%n%cn %ce %cd%n%B%x00", rev)
}

// A history imported from git and exported again is the same history: the
// same authors and committers with their addresses, dates and time zones,
// the same messages, and so, when nothing was left out, the same commits.
func TestImportExport_RoundTrip(t *testing.T) {
	t.Parallel()
	r := authoredRepo(t)
	s, _ := importAll(t, r, nil)

	back := exportTo(t, s, nil)
	if diff := cmp.Diff(gitLog(r, "HEAD"), gitLog(back, "HEAD")); diff != "" {
		t.Errorf("git log after import and export (-original +exported):\n%s", diff)
	}
	if got, want := back.git("rev-parse", "HEAD"), r.git("rev-parse", "HEAD"); got != want {
		t.Errorf("exported head %s, want the original %s", got, want)
	}
	// What git has no place for is in a note on each commit, so that the
	// messages stay the author's.
	cs := history(t, s, "main")
	for i, id := range back.firstParents() {
		note := back.git("notes", "show", id)
		for _, want := range []string{gitio.TrailerCommit + ": " + cs[i].Hash.String(), gitio.TrailerPrincipal + ": " + string(cs[i].Principal)} {
			if !strings.Contains(note, want) {
				t.Errorf("note on %s = %q, want it to hold %q", id, note, want)
			}
		}
	}

	// A second round changes nothing either.
	s2, _ := importAll(t, back, nil)
	again := exportTo(t, s2, nil)
	if got, want := again.git("rev-parse", "HEAD"), r.git("rev-parse", "HEAD"); got != want {
		t.Errorf("head after a second round %s, want %s", got, want)
	}
}

// Commits of a history imported before cairn recorded git identities, or
// made in cairn, are exported as before: an identity derived from the
// principal, and trailers.
func TestExportGit_CairnCommits(t *testing.T) {
	t.Parallel()
	r := authoredRepo(t)
	s, _ := importAll(t, r, nil)
	c := vaultCommit(t, s, "main", map[string]string{"d.md": "# D\n"}, "Made in cairn")
	back := exportTo(t, s, nil)
	if got := back.git("log", "-1", "--format=%an <%ae>"); got != "ada <ada@cairn.invalid>" {
		t.Errorf("identity of a cairn commit = %q", got)
	}
	if got := back.git("log", "-1", "--format=%B"); !strings.Contains(got, gitio.TrailerCommit+": "+c.Hash.String()) {
		t.Errorf("message of a cairn commit = %q, want its trailers", got)
	}
	if diff := cmp.Diff(gitLog(r, "HEAD"), gitLog(back, "HEAD~1")); diff != "" {
		t.Errorf("git log of the imported part (-original +exported):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(back.dir, "d.md")); err != nil {
		t.Error(err)
	}
}
