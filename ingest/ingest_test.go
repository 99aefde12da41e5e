package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"cairn"
	"cairn/admit"
	"cairn/durable"
	"cairn/ingest"
	"cairn/internal/confine"
	"cairn/sqlite/sqldurable"
	"cairn/sqlite/sqlingest"
	"cairn/store"
	"cairn/vault"
)

func TestMain(m *testing.M) {
	confine.MaybeExec()
	os.Exit(m.Run())
}

// env is a vault with its ingest service and a queue that runs jobs here.
type env struct {
	t   *testing.T
	ctx context.Context
	v   *vault.Vault
	svc *ingest.Service
	q   *durable.Queue
	dir string // where test files are written
}

// page is a small concept page.
func page(title, body string) string {
	return fmt.Sprintf("---\ntitle: %s\ntype: concept\n---\n# %s\n\n%s\n", title, title, body)
}

// seed is the vault every test starts from: an index and pages that link.
var seed = map[string]string{
	"index.md": "---\ntitle: Home\ntype: index\n---\n# Home\n\n## Concepts\n\n" +
		"- [[concepts/paper|Paper]]\n- [[concepts/ink|Printing ink]]\n- [[concepts/press|Printing press]]\n- [[concepts/type|Movable type]]\n",
	"concepts/paper.md": page("Paper", "Rag paper came to Europe from Spain. See [[concepts/ink|Printing ink]]."),
	"concepts/ink.md":   page("Printing ink", "Oil-based ink stuck to metal type. See [[concepts/press|Printing press]]."),
	"concepts/press.md": page("Printing press", "A screw press. See [[concepts/type|Movable type]]."),
	"concepts/type.md":  page("Movable type", "Cast letters. See [[concepts/paper|Paper]]."),
	"log.md":            "# Log\n",
}

func setup(t *testing.T, policy string, mods ...func(*ingest.Options)) *env {
	t.Helper()
	ctx := t.Context()
	root := t.TempDir()
	v, err := vault.Init(ctx, filepath.Join(root, "vault"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	files := maps(seed)
	if policy != "" {
		files["cairn.yaml"] = policy
	}
	b := v.Store.NewBatch()
	var changes []store.FileChange
	for p, d := range files {
		changes = append(changes, store.FileChange{Path: p, Data: []byte(d)})
	}
	tree, err := b.Edit(ctx, store.EmptyTree, changes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Admit.Submit(ctx, admit.Request{Route: "init", Tree: tree, Batch: b, Principal: cairn.User("ada"), Message: "seed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.SyncMain(ctx); err != nil {
		t.Fatal(err)
	}
	opts := &ingest.Options{Env: []string{"OUTSIDE=" + filepath.Join(root, "outside")}}
	for _, m := range mods {
		m(opts)
	}
	svc := ingest.New(v, sqlingest.New(v.DB), sqldurable.New(v.DB), opts)
	v.Admit.OnDecided(svc.Decided)
	workers := river.NewWorkers()
	svc.Register(workers)
	q, err := durable.New(v.DB.Write(), sqldurable.New(v.DB), durable.Config{Workers: workers, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetQueue(q)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop(context.Background()) })
	dir := filepath.Join(root, "in")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(filepath.Join(root, "outside"), 0o755)
	return &env{t: t, ctx: ctx, v: v, svc: svc, q: q, dir: dir}
}

func maps(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// file writes a file to ingest and returns its path.
func (e *env) file(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// ingest adds files and waits until every queued source has a verdict.
func (e *env) ingest(files ...string) []*ingest.Added {
	e.t.Helper()
	added, err := e.svc.Add(e.ctx, files, cairn.User("ada"))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ad := range added {
		if ad.Queued {
			ad.Source = e.wait(ad.Source.ID)
		}
	}
	return added
}

// wait returns a source once it has a verdict; it fails the test after a
// minute (a hang, not a timing assertion).
func (e *env) wait(id string) *ingest.Source {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		src, err := e.svc.Get(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		switch src.Status {
		case ingest.Merged, ingest.Held, ingest.Rejected, ingest.Failed:
			return src
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("source %s still %s after a minute", src.Name, src.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) tree() cairn.Hash {
	e.t.Helper()
	h, err := e.v.Store.Head(e.ctx, "main")
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.v.Store.ReadCommit(e.ctx, h)
	if err != nil {
		e.t.Fatal(err)
	}
	return c.Tree
}

func (e *env) read(path string) string {
	e.t.Helper()
	ent, err := e.v.Store.Get(e.ctx, e.tree(), path)
	if err != nil {
		e.t.Fatalf("read %s: %v", path, err)
	}
	data, err := e.v.Store.ReadBlob(e.ctx, ent.Blob)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func (e *env) exists(path string) bool {
	_, err := e.v.Store.Get(e.ctx, e.tree(), path)
	return err == nil
}

func (e *env) proposal(src *ingest.Source) *cairn.Proposal {
	e.t.Helper()
	if src.Proposal == 0 {
		e.t.Fatalf("source %s (%s: %s) has no proposal", src.Name, src.Status, src.Error)
	}
	p, err := e.v.Admit.Get(e.ctx, src.Proposal)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

const article = `# Paper mills of Fabriano

Paper mills in Fabriano used water-powered hammers to beat rags into pulp.
The mills also introduced watermarks, which let historians date sheets.
Printing ink made from linseed oil needed good paper to hold it.
The printing press pressed inked type onto damp paper, one sheet at a time.
Merchants carried Fabriano paper across Europe along the trade routes.
`

func TestIngest_Extractive(t *testing.T) {
	e := setup(t, "")
	added := e.ingest(e.file("fabriano.md", article), e.file("notes.txt", "Notes on ink\n\nPrinting ink was thick and dark. Printing ink was made with oil. The press needed it.\n"))
	for _, ad := range added {
		if ad.Source.Status != ingest.Merged {
			t.Fatalf("%s: %s %s", ad.Source.Name, ad.Source.Status, ad.Source.Error)
		}
	}
	p := e.proposal(added[0].Source)
	if p.Principal != cairn.Agent("extractive") || p.Status != cairn.ProposalAdmitted {
		t.Errorf("proposal by %s is %s", p.Principal, p.Status)
	}
	// The summary page, linked to the pages whose titles occur, listed in
	// index.md; the log entry in Eva's format; the source under raw/.
	idx := e.read("index.md")
	if !strings.Contains(idx, "[[summaries/") {
		t.Errorf("index.md does not list the summary:\n%s", idx)
	}
	var summary string
	for ent, err := range e.v.Store.Files(e.ctx, e.tree(), "summaries/") {
		if err != nil {
			t.Fatal(err)
		}
		if d := e.read(ent.Path); strings.Contains(d, "source: raw/fabriano.md") {
			summary = d
		}
	}
	if !strings.Contains(summary, "[[concepts/paper|Paper]]") || !strings.Contains(summary, "type: summary") {
		t.Errorf("summary page:\n%s", summary)
	}
	log := e.read("log.md")
	if !strings.Contains(log, "] ingest | fabriano.md\n") || !strings.Contains(log, "] ingest | notes.txt\n") {
		t.Errorf("log.md:\n%s", log)
	}
	if e.read("raw/fabriano.md") != article {
		t.Errorf("raw/fabriano.md is not the source")
	}
	// No new findings: the change lints clean.
	if got := lintHolds(p.Findings); len(got) > 0 {
		t.Errorf("findings that would hold: %v", got)
	}
	// The folder of main has the new files.
	if _, err := os.Stat(filepath.Join(e.v.Root, "raw", "fabriano.md")); err != nil {
		t.Errorf("main's folder: %v", err)
	}

	t.Run("SameContentOnce", func(t *testing.T) {
		again, err := e.svc.Add(e.ctx, []string{e.file("copy.md", article)}, cairn.User("ada"))
		if err != nil {
			t.Fatal(err)
		}
		if again[0].Queued || !strings.Contains(again[0].Note, "ingested before as raw/fabriano.md") {
			t.Errorf("same content again: queued %v, note %q", again[0].Queued, again[0].Note)
		}
	})
	t.Run("SummaryNeverShadowsAPage", func(t *testing.T) {
		// A source named paper.md must not make summaries/paper.md: every
		// [[paper]] link would then be ambiguous.
		src := e.ingest(e.file("paper.md", "# Notes on rag paper\n\nRag paper was made from linen. Paper mills used water power. Printing ink sat on the paper.\n"))[0].Source
		if src.Status != ingest.Merged {
			t.Fatalf("paper.md: %s %s", src.Status, src.Error)
		}
		if want := "summaries/paper-" + src.ID[:8] + ".md"; e.exists("summaries/paper.md") || !e.exists(want) {
			t.Errorf("the summary of paper.md is not %s", want)
		}
	})
	t.Run("NameTaken", func(t *testing.T) {
		other := e.ingest(e.file("fabriano.md", strings.Replace(article, "# Paper mills of Fabriano", "# Fabriano, second edition", 1)))
		src := other[0].Source
		want := "raw/fabriano." + src.ID[:8] + ".md"
		if src.Path != want || src.Status != ingest.Merged {
			t.Errorf("a different file named fabriano.md went to %s (%s), want %s", src.Path, src.Status, want)
		}
		if e.read("raw/fabriano.md") != article {
			t.Errorf("raw/fabriano.md was overwritten")
		}
	})
}

func lintHolds(fs []cairn.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Verdict != cairn.Admit {
			out = append(out, f.Gate+"/"+f.Rule+" "+f.Page)
		}
	}
	return out
}

func TestIngest_BadSources(t *testing.T) {
	e := setup(t, "sources:\n  max_size: 1MiB\n")
	big := filepath.Join(e.dir, "big.md")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20) // 100 MB, sparse: over the limit
	f.Close()
	files := []string{
		e.file("empty.md", ""),
		e.file("blank.txt", " \n\t\n"),
		e.file("binary.md", "PK\x03\x04\x00\x00binary"),
		e.file("latin1.txt", "caf\xe9\n"),
		big,
		e.file(".hidden.md", "hidden text\n"),
		e.file("bad\x01name.md", "text\n"),
		e.file("gpj.\u202Eevil.md", "bidi text\n"),
		e.file("zero\u200Bwidth.md", "zero-width text\n"),
		e.file("paper.docx", "PK\x03\x04 text\n"),
		e.file("good.md", article),
	}
	added := e.ingest(files...)
	wantErr := map[string]string{
		"empty.md": "empty", "blank.txt": "empty", "binary.md": "binary", "latin1.txt": "binary",
		"big.md": "the limit is 1.0 MiB", ".hidden.md": "starts with a dot", "bad\x01name.md": "cannot be a vault path",
		"gpj.\u202Eevil.md": "invisible character U+202E", "zero\u200Bwidth.md": "invisible character U+200B",
		"paper.docx": "cairn ingests Markdown, text, HTML and PDF",
	}
	for _, ad := range added {
		src := ad.Source
		if src.Name == "good.md" {
			if src.Status != ingest.Merged {
				t.Errorf("good.md after bad ones: %s %s", src.Status, src.Error)
			}
			continue
		}
		want := wantErr[src.Name]
		if src.Status != ingest.Failed || !strings.Contains(src.Error, want) || src.Hint == "" {
			t.Errorf("%q: status %s error %q hint %q; want failed with %q and a hint", src.Name, src.Status, src.Error, src.Hint, want)
		}
		if src.Path != "" {
			t.Errorf("%q was stored as %s", src.Name, src.Path)
		}
	}
	// Nothing of the refused files reached the vault.
	var raw []string
	for ent, err := range e.v.Store.Files(e.ctx, e.tree(), "raw/") {
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, ent.Path)
	}
	if !slices.Equal(raw, []string{"raw/good.md"}) {
		t.Errorf("raw/ holds %v, want only raw/good.md", raw)
	}
	// Missing files and folders are usage errors and change nothing.
	for _, bad := range []string{filepath.Join(e.dir, "missing.md"), e.dir} {
		if _, err := e.svc.Add(e.ctx, []string{bad}, cairn.User("ada")); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Add(%s) = %v, want EINVALID", bad, err)
		}
	}
	// A refused file ingested again once fixed is accepted.
	fixed := e.ingest(e.file("renamed.md", "hidden text\n"))
	if fixed[0].Source.Status != ingest.Merged {
		t.Errorf("the content of .hidden.md under a good name: %s %s", fixed[0].Source.Status, fixed[0].Source.Error)
	}
}

// command returns a policy that runs a shell script as the agent.
func command(t *testing.T, script string, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ncat > /dev/null\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("agent:\n  runtime: command\n  command: %s\n%s", p, extra)
}

// TestIngest_CommandAgents checks that each misbehaving command agent ends
// in the verdict of the admission table.
func TestIngest_CommandAgents(t *testing.T) {
	cases := []struct {
		name    string
		script  string
		extra   string
		status  string // the source's status
		gates   []string
		failure string // the source's error, for failures
	}{
		{"Good", `printf -- '---\ntitle: Fabriano\ntype: concept\n---\n# Fabriano\n\nSee [[concepts/paper|Paper]].\n' > concepts/fabriano.md
sed -i 's|- \[\[concepts/type|- [[concepts/fabriano\|Fabriano]]\n- [[concepts/type|' index.md
echo "Wrote the Fabriano page."`, "", ingest.Merged, nil, ""},
		{"Hangs", "echo starting; sleep 600", "  inactivity: 1s\n", ingest.Failed, nil, "printed nothing for 1s"},
		{"TooLong", "while true; do echo working; sleep 0.2; done", "  timeout: 1s\n", ingest.Failed, nil, "longer than 1s"},
		{"ExitsNonZero", "echo oops >&2; exit 3", "", ingest.Failed, nil, "exited with status 3"},
		{"WritesNothing", "echo done", "", ingest.Failed, nil, "changed nothing"},
		{"DeletesHalf", "rm concepts/paper.md concepts/ink.md; echo tidied", "", ingest.Held, []string{"deletion/delete", "lint/broken-link"}, ""},
		{"WritesRaw", "echo changed > raw/fabriano.md; echo edited", "", ingest.Rejected, []string{"protected/raw"}, ""},
		{"WritesLog", "echo '## [2026-01-01] ingest | x' >> log.md", "", ingest.Rejected, []string{"protected/log"}, ""},
		{"WritesPolicy", "printf 'agent:\\n  runtime: extractive\\n' > cairn.yaml", "", ingest.Rejected, []string{"contract/contract"}, ""},
		{"WritesScript", "printf '#!/bin/sh\\nrm -rf /\\n' > concepts/run.sh; echo added a tool", "", ingest.Rejected, []string{"file-type/script", "lint/non-markdown-file"}, ""},
		{"WritesDotfile", "echo 'x' > .gitignore; mkdir -p .github; echo x > .github/notes.md", "", ingest.Rejected, []string{"file-type/dotfile"}, ""},
		{"WritesPrivateVar", `mkdir -p private/var/folders/ab/T; printf -- '---\ntitle: Temp\ntype: concept\n---\n# Temp\n' > private/var/folders/ab/T/notes.md`, "", ingest.Rejected, []string{"lint/orphan", "misplaced-page/misplaced-page"}, ""},
		{"Symlink", "ln -s /etc/passwd concepts/passwd.md; echo linked", "", ingest.Rejected, []string{"file-type/special"}, ""},
		{"WritesBidiName", `printf -- '---\ntitle: Bidi\ntype: concept\n---\n# Bidi\n\nSee [[concepts/paper|Paper]].\n' > "concepts/$(printf 'dm.\342\200\256evil').md"; echo wrote`,
			"", ingest.Rejected, []string{"file-type/special"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, command(t, tc.script, tc.extra))
			added := e.ingest(e.file("fabriano.md", article))
			src := added[0].Source
			if src.Status != tc.status {
				t.Fatalf("status %s (error %q), want %s", src.Status, src.Error, tc.status)
			}
			if tc.failure != "" {
				if !strings.Contains(src.Error, tc.failure) || src.Hint == "" {
					t.Errorf("error %q hint %q, want %q and a hint", src.Error, src.Hint, tc.failure)
				}
				return
			}
			p := e.proposal(src)
			var gates []string
			for _, f := range p.Findings {
				if f.Verdict != cairn.Admit {
					gates = append(gates, f.Gate+"/"+f.Rule)
				}
			}
			slices.Sort(gates)
			gates = slices.Compact(gates)
			if !slices.Equal(gates, tc.gates) {
				t.Errorf("gates that did not admit: %v, want %v", gates, tc.gates)
			}
			if tc.status != ingest.Merged && e.exists("concepts/fabriano.md") {
				t.Errorf("a change that was not admitted reached main")
			}
		})
	}
}

// TestIngest_WriteOutside checks both confinement modes: with Landlock the
// write never happens; without (where agent.unconfined allows it), the
// snapshot catches it and the proposal is rejected.
func TestIngest_WriteOutside(t *testing.T) {
	script := `echo pwned > "$OUTSIDE/pwned.txt" || echo "refused"
printf -- '---\ntitle: Fabriano\ntype: concept\n---\n# Fabriano\n\nSee [[concepts/paper|Paper]].\n' > concepts/fabriano.md
sed -i 's|- \[\[concepts/type|- [[concepts/fabriano\|Fabriano]]\n- [[concepts/type|' index.md
echo "Wrote the Fabriano page."`
	t.Run("Landlock", func(t *testing.T) {
		if confine.Available() == 0 {
			t.Skip("the kernel offers no Landlock")
		}
		e := setup(t, command(t, script, ""))
		src := e.ingest(e.file("fabriano.md", article))[0].Source
		outside := filepath.Join(filepath.Dir(e.dir), "outside", "pwned.txt")
		if _, err := os.Stat(outside); err == nil {
			t.Fatalf("the agent wrote %s despite Landlock", outside)
		}
		if src.Status != ingest.Merged {
			t.Errorf("status %s, want merged (the refused write did no harm)", src.Status)
		}
	})
	t.Run("Snapshot", func(t *testing.T) {
		t.Setenv("CAIRN_LANDLOCK", "off")
		e := setup(t, command(t, strings.ReplaceAll(script, `"$OUTSIDE/pwned.txt"`, `../../../../index.md`), "  unconfined: allow\n"))
		src := e.ingest(e.file("fabriano.md", article))[0].Source
		if src.Status != ingest.Rejected {
			t.Fatalf("status %s (%s), want rejected", src.Status, src.Error)
		}
		p := e.proposal(src)
		found := false
		for _, f := range p.Findings {
			found = found || f.Gate == admit.GateOutside && strings.HasSuffix(f.Subject, "/vault/index.md")
		}
		if !found {
			t.Errorf("no outside-write finding for the vault's index.md: %v", p.Findings)
		}
	})
}

// TestIngest_Cancel cancels a running job: the agent's whole process tree
// stops and the source fails. A retry while the job is still stopping is
// refused and changes nothing (River would leave the running job as it is,
// and the source would wait for a job that ends without running it); once
// the job has ended, a retry runs the source to a verdict.
func TestIngest_Cancel(t *testing.T) {
	// The agent's child is found by its command line: in a PID namespace,
	// the agent does not know its child's pid on this side. The first
	// attempt is slow; the retried job's second attempt does the work.
	token := fmt.Sprint(time.Now().UnixNano())
	script := `case "$(pwd)" in */job-*-1/vault) sleep 600.` + token + ` & echo started; wait; exit 0;; esac
` + fabriano
	// The first attempt's "started" is held until release: until then its
	// job cannot end, however soon its agent is stopped.
	started, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	e := setup(t, command(t, script, ""), func(o *ingest.Options) {
		o.Activity = func(_ *ingest.Source, kind, text string) {
			if text == "started" && held.CompareAndSwap(false, true) {
				close(started)
				<-release
			}
		}
	})
	released := false
	unblock := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(unblock) // before the queue stops
	added, err := e.svc.Add(e.ctx, []string{e.file("fabriano.md", article)}, cairn.User("ada"))
	if err != nil {
		t.Fatal(err)
	}
	src := added[0].Source
	// Wait for the agent's child to start, then cancel the job.
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the agent never started")
	}
	pid := processWith(t, "600."+token)
	if _, err := e.svc.CancelJob(e.ctx, src.Job, cairn.User("ada")); err != nil {
		t.Fatal(err)
	}
	// Its job is still running: a retry is refused, by job or by source,
	// and the source stays as the cancel left it.
	for _, retry := range []func() (*ingest.Source, error){
		func() (*ingest.Source, error) { return e.svc.RetryJob(e.ctx, src.Job, cairn.User("ada")) },
		func() (*ingest.Source, error) { return e.svc.Retry(e.ctx, src.ID, cairn.User("ada")) },
	} {
		if got, err := retry(); cairn.ErrorCode(err) != cairn.ECONFLICT || cairn.ErrorHint(err) == "" {
			t.Errorf("retry of a job still stopping = %+v, %v; want a conflict with a hint", got, err)
		}
	}
	got, err := e.svc.Get(e.ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ingest.Failed || !strings.Contains(got.Error, "cancelled by user:ada") || got.Job != src.Job || got.Hint == "" {
		t.Errorf("after cancel: %s %q (hint %q) under job %d", got.Status, got.Error, got.Hint, got.Job)
	}
	// The event that tells a watching cairn ingest carries the hint too.
	evs, err := e.v.Admit.Events(e.ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, ev := range evs {
		if ev.Kind == "ingest.failed" {
			var d struct{ Error, Hint string }
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			failed = append(failed, d.Error+" / "+d.Hint)
		}
	}
	if want := []string{got.Error + " / " + got.Hint}; !slices.Equal(failed, want) {
		t.Errorf("ingest.failed events %q, want %q", failed, want)
	}
	// The agent's whole process tree stops.
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's child %d still runs after the cancel", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Once its job has ended, jobs retry runs it again, to a verdict.
	unblock()
	if j := e.finished(src.Job); j.State != durable.StateCancelled {
		t.Errorf("the cancelled job ended %s, want %s", j.State, durable.StateCancelled)
	}
	if _, err := e.svc.RetryJob(e.ctx, src.Job, cairn.User("ada")); err != nil {
		t.Fatal(err)
	}
	if got := e.wait(src.ID); got.Status != ingest.Merged || got.Job != src.Job {
		t.Errorf("after the retry: %s (%s) under job %d, want merged under job %d", got.Status, got.Error, got.Job, src.Job)
	}
}

func TestIngest_ReviewAndRetry(t *testing.T) {
	e := setup(t, command(t, "rm concepts/paper.md; echo removed paper", ""))
	src := e.ingest(e.file("fabriano.md", article))[0].Source
	if src.Status != ingest.Held {
		t.Fatalf("status %s, want held", src.Status)
	}
	if _, err := e.v.Admit.Reject(e.ctx, src.Proposal, cairn.User("bob"), "keep paper"); err != nil {
		t.Fatal(err)
	}
	got, _ := e.svc.Get(e.ctx, src.ID)
	if got.Status != ingest.Rejected {
		t.Fatalf("after reject: %s", got.Status)
	}
	if log := e.read("log.md"); !strings.Contains(log, "] ingest | fabriano.md\nRejected in review by user:bob") {
		t.Errorf("log.md:\n%s", log)
	}
	// Rejected stays rejected by content.
	again, err := e.svc.Add(e.ctx, []string{e.file("other-name.md", article)}, cairn.User("ada"))
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Queued || !strings.Contains(again[0].Note, "rejected before") {
		t.Errorf("a rejected source ingested again: queued %v note %q", again[0].Queued, again[0].Note)
	}
	// Retried, it runs again and is held again; accepting merges it.
	if _, err := e.svc.Retry(e.ctx, src.ID[:8], cairn.User("ada")); err != nil {
		t.Fatal(err)
	}
	got = e.wait(src.ID)
	if got.Status != ingest.Held || got.Proposal == src.Proposal {
		t.Fatalf("after retry: %s proposal %d", got.Status, got.Proposal)
	}
	if _, err := e.v.Admit.Accept(e.ctx, got.Proposal, cairn.User("bob")); err != nil {
		t.Fatal(err)
	}
	got, _ = e.svc.Get(e.ctx, src.ID)
	if got.Status != ingest.Merged || e.exists("concepts/paper.md") {
		t.Errorf("after accept: %s, paper exists %v", got.Status, e.exists("concepts/paper.md"))
	}
	var statuses []string
	for _, h := range got.History {
		statuses = append(statuses, h.Status)
	}
	want := []string{"queued", "running", "held", "rejected", "queued", "running", "held", "merged"}
	if !slices.Equal(statuses, want) {
		t.Errorf("history %v, want %v", statuses, want)
	}
}

func TestIngest_Concurrent(t *testing.T) {
	// Several sources at once: each agent works on the head it found; the
	// later admissions merge onto the moved head (index.md gains a line
	// from each, merged as a list union).
	e := setup(t, "")
	var files []string
	for i := range 6 {
		files = append(files, e.file(fmt.Sprintf("note-%d.md", i), fmt.Sprintf("# Note %d on paper\n\nPaper number %d was made in a mill. The printing press used it. Printing ink dried on it.\n", i, i)))
	}
	added := e.ingest(files...)
	for _, ad := range added {
		if ad.Source.Status != ingest.Merged {
			t.Errorf("%s: %s %s", ad.Source.Name, ad.Source.Status, ad.Source.Error)
		}
	}
	idx := e.read("index.md")
	for i := range 6 {
		if !strings.Contains(idx, fmt.Sprintf("Note %d on paper", i)) {
			t.Errorf("index.md lacks note %d:\n%s", i, idx)
		}
	}
	log := e.read("log.md")
	if n := strings.Count(log, "] ingest | note-"); n != 6 {
		t.Errorf("log.md has %d ingest entries, want 6", n)
	}
	d, err := e.v.Index.Check(e.ctx, true)
	if err != nil || !d.OK() {
		t.Errorf("index check: %v %v", err, d)
	}
}

// TestIngest_NFDName ingests a source whose file name is in NFD, as macOS
// stores accented names: the source is recorded under the path the tree
// holds (NFC), its agent reads it, and either form of the name finds it.
func TestIngest_NFDName(t *testing.T) {
	e := setup(t, "")
	nfd, nfc := "cafe\u0301-notes.md", "caf\u00e9-notes.md"
	src := e.ingest(e.file(nfd, article))[0].Source
	if src.Status != ingest.Merged {
		t.Fatalf("%q: %s %s", nfd, src.Status, src.Error)
	}
	if src.Path != "raw/"+nfc || src.Name != nfc {
		t.Errorf("source name %q path %q, want %q and raw/%q", src.Name, src.Path, nfc, nfc)
	}
	if e.read("raw/"+nfc) != article {
		t.Errorf("raw/%q is not the source", nfc)
	}
	for _, ref := range []string{nfd, nfc} {
		got, err := e.svc.Get(e.ctx, ref)
		if err != nil || got.ID != src.ID {
			t.Errorf("Get(%q) = %v, %v; want source %.12s", ref, got, err, src.ID)
		}
	}
}

// TestIngest_OneJobPerSource checks that a job takes a source only when it
// is queued under that job: a second job for a source another job is
// running is cancelled without running an agent, and the source's own job
// decides it.
func TestIngest_OneJobPerSource(t *testing.T) {
	taken, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	e := setup(t, "", func(o *ingest.Options) {
		o.Crash = func(point string) {
			if point == "ingest:running" && first.CompareAndSwap(false, true) {
				close(taken)
				<-release
			}
		}
	})
	released := false
	unblock := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(unblock) // before the queue stops
	added, err := e.svc.Add(e.ctx, []string{e.file("fabriano.md", article)}, cairn.User("ada"))
	if err != nil {
		t.Fatal(err)
	}
	src := added[0].Source
	<-taken // its job runs, held at ingest:running
	var other int64
	if err := e.v.DB.Update(e.ctx, func(tx cairn.Tx) error {
		var err error
		other, err = e.q.InsertTx(e.ctx, tx, ingest.Args{Source: src.ID}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	j := e.finished(other)
	unblock()
	got := e.wait(src.ID)
	if j.State != durable.StateCancelled || got.Status != ingest.Merged || got.Job != src.Job {
		t.Errorf("a second job for %s ended %s; the source is %s under job %d; want it cancelled and the source merged under job %d",
			src.Name, j.State, got.Status, got.Job, src.Job)
	}
	var runs []string
	for _, h := range got.History {
		if h.Status == ingest.Running {
			runs = append(runs, string(h.Principal))
		}
	}
	if want := []string{fmt.Sprintf("job:%d", src.Job)}; !slices.Equal(runs, want) {
		t.Errorf("the source ran under %v, want %v", runs, want)
	}
}

// queue starts another queue on e's vault that runs e's ingest jobs, at
// most max at once, as another worker would; it stops with the test.
func (e *env) queue(max int) *durable.Queue {
	e.t.Helper()
	workers := river.NewWorkers()
	e.svc.Register(workers)
	q, err := durable.New(e.v.DB.Write(), sqldurable.New(e.v.DB), durable.Config{Workers: workers, MaxWorkers: max, PollInterval: 20 * time.Millisecond})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := q.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { q.Stop(context.Background()) })
	return q
}

// TestIngest_StaleAttempt runs a job's first attempt on a worker that is
// wrongly taken for dead: its job is handed back and a second attempt, on
// another worker, takes the source. The first attempt's agent then fails:
// that failure is not the source's any more, and the second attempt
// decides it.
func TestIngest_StaleAttempt(t *testing.T) {
	// The first attempt's agent fails; the second's does the work.
	script := `case "$(pwd)" in */job-*-1/vault) echo "the first attempt gives up" >&2; exit 3;; esac
` + fabriano
	// Each attempt waits at ingest:running, once it has taken the source,
	// until the test lets it go on; the first one's failure is signalled.
	var arrived atomic.Int32
	running := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	goOn := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	failed := make(chan struct{}, 2)
	e := setup(t, command(t, script, ""), func(o *ingest.Options) {
		o.Crash = func(point string) {
			switch point {
			case "ingest:running":
				if n := arrived.Add(1); n <= 2 {
					close(running[n-1])
					<-goOn[n-1]
				}
			case "ingest:failed":
				failed <- struct{}{}
			}
		}
	})
	var let [2]sync.Once
	letGo := func(i int) { let[i].Do(func() { close(goOn[i]) }) }
	t.Cleanup(func() { letGo(0); letGo(1) }) // before the queues stop
	wait := func(c chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(time.Minute): // a hang, not a timing assertion
			t.Fatalf("%s never happened", what)
		}
	}
	// The first worker runs one job at a time, so that it cannot take the
	// job again itself once it is handed back.
	if err := e.q.Stop(e.ctx); err != nil {
		t.Fatal(err)
	}
	first := e.queue(1)
	e.svc.SetQueue(first)
	added, err := e.svc.Add(e.ctx, []string{e.file("fabriano.md", article)}, cairn.User("ada"))
	if err != nil {
		t.Fatal(err)
	}
	src := added[0].Source
	wait(running[0], "the first attempt")
	// Its worker's record now names another process: any worker that
	// starts takes it for dead and hands its job back.
	if _, err := e.v.DB.Write().ExecContext(e.ctx, `UPDATE workers SET proc = 'another process' WHERE id = ?`, first.ID()); err != nil {
		t.Fatal(err)
	}
	e.queue(1)
	wait(running[1], "the second attempt")
	got, err := e.svc.Get(e.ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ingest.Running || got.Attempt != 2 {
		t.Fatalf("the second attempt left the source %s under attempt %d, want running under attempt 2", got.Status, got.Attempt)
	}
	// The first attempt's agent fails: the source stays the second's.
	letGo(0)
	wait(failed, "the first attempt's failure")
	got, err = e.svc.Get(e.ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ingest.Running || got.Job != src.Job || got.Attempt != 2 {
		t.Errorf("after the first attempt failed, the source is %s (%s) under job %d attempt %d; want running under job %d attempt 2",
			got.Status, got.Error, got.Job, got.Attempt, src.Job)
	}
	// River ends the job's row when the first attempt returns, though the
	// second runs it (River does not look at the attempt). The second
	// attempt goes on once it has, and decides all the same.
	if j := e.finished(src.Job); j.State != durable.StateCancelled {
		t.Logf("the job ended %s", j.State)
	}
	letGo(1)
	got = e.wait(src.ID)
	if got.Status != ingest.Merged || got.Attempt != 2 {
		t.Errorf("the second attempt left the source %s (%s) under attempt %d, want merged under attempt 2", got.Status, got.Error, got.Attempt)
	}
	var statuses []string
	for _, h := range got.History {
		statuses = append(statuses, h.Status)
	}
	if want := []string{"queued", "running", "running", "merged"}; !slices.Equal(statuses, want) {
		t.Errorf("history %v, want %v", statuses, want)
	}
}

// finished returns a job once it is finished; it fails the test after a
// minute (a hang, not a timing assertion).
func (e *env) finished(id int64) *durable.Job {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := e.q.Get(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if !j.Finalized.IsZero() {
			return j
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %d still %s after a minute", id, j.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIngest_SameSlug ingests together two sources whose names differ only
// in case, and whose jobs run at once on the same base (each waits at
// ingest:running for the other): each gets a summary of its own, both are
// admitted, and nothing is lost.
func TestIngest_SameSlug(t *testing.T) {
	var mu sync.Mutex
	arrived, both := 0, make(chan struct{})
	e := setup(t, "", func(o *ingest.Options) {
		o.Crash = func(point string) {
			if point != "ingest:running" {
				return
			}
			mu.Lock()
			arrived++
			if arrived == 2 {
				close(both)
			}
			mu.Unlock()
			select {
			case <-both:
			case <-time.After(time.Minute): // a hang, not a timing assertion
			}
		}
	})
	added := e.ingest(
		e.file("Notes.md", "# Notes on paper\n\nRag paper was made from linen. Paper mills used water power.\n"),
		e.file("notes.md", "# Notes on ink\n\nPrinting ink was made from linseed oil. The press needed it.\n"),
	)
	summaries := map[string]string{} // source path → its summary
	for ent, err := range e.v.Store.Files(e.ctx, e.tree(), "summaries/") {
		if err != nil {
			t.Fatal(err)
		}
		page := e.read(ent.Path)
		for _, ad := range added {
			if strings.Contains(page, "source: "+ad.Source.Path+"\n") {
				summaries[ad.Source.Path] = ent.Path
			}
		}
	}
	idx := e.read("index.md")
	for _, ad := range added {
		src := ad.Source
		if src.Status != ingest.Merged {
			t.Errorf("%s: %s (%s)", src.Name, src.Status, src.Error)
		}
		sum := summaries[src.Path]
		if sum == "" {
			t.Errorf("no summary of %s on main", src.Path)
			continue
		}
		if !strings.Contains(idx, "[["+strings.TrimSuffix(sum, ".md")+"|") {
			t.Errorf("index.md does not list %s", sum)
		}
	}
	if len(summaries) != 2 || summaries[added[0].Source.Path] == summaries[added[1].Source.Path] {
		t.Errorf("summaries %v, want one of its own for each source", summaries)
	}
}
