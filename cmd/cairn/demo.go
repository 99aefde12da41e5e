package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"cairn/cmd/cairn/sample"
	"cairn/internal/confine"
)

func (a *cli) demoCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "The ingest story, narrated, in a new vault: sources, agents, admission, review",
		Long: `Demo tells cairn's main job in a new folder, running the commands a person
would and explaining each:

  1. a bundled research brain about early printing becomes a vault;
  2. three bundled sources are ingested by the default extractive agent
     (offline, no key) and merged: their summaries, index lines and log
     entries, and a prompt injection in one source that changes nothing;
  3. a bundled command agent, a shell script that deletes a page, runs
     confined and its change is held for review;
  4. a person reviews and rejects it; the source stays rejected until it is
     retried, and the extractive agent then merges it under cairn worker.

It needs no network and no keys. The folders stay for you to explore.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.json {
				return usageError("demo is a narrated tour; it has no JSON output")
			}
			if dir == "" {
				var err error
				if dir, err = os.MkdirTemp("", "cairn-demo-"); err != nil {
					return err
				}
			} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return usageError("%s is not empty; demo needs a new folder", dir)
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			return a.demo(abs)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "where to build the demo (default: a new temporary folder)")
	return cmd
}

// tour runs commands against a vault folder and narrates.
type tour struct {
	a    *cli
	w    io.Writer
	step int
}

func (t *tour) say(text string) {
	fmt.Fprintf(t.w, "\n%s\n", strings.TrimSpace(text))
}

func (t *tour) section(title string) {
	t.step++
	fmt.Fprintf(t.w, "\n== %d. %s ==\n", t.step, title)
}

// argv returns the arguments that run a cairn command in folder dir, as
// the person who started the demo.
func (t *tour) argv(dir string, args ...string) []string {
	all := []string{"-C", dir}
	if t.a.as != "" {
		all = append(all, "--as", t.a.as)
	}
	return append(all, args...)
}

// run prints and runs one cairn command in folder dir; it fails when the
// exit code is not want.
func (t *tour) run(dir string, want int, args ...string) error {
	return t.runShown(dir, want, 0, args, args)
}

// runShown runs args but prints shown, and at most max lines of output
// (0: all of it); it fails when the exit code is not want.
func (t *tour) runShown(dir string, want, max int, shown, args []string) error {
	fmt.Fprintf(t.w, "\n$ cairn %s\n", strings.Join(quote(shown), " "))
	w := &lineCap{w: t.w, max: max}
	code := Main(t.a.ctx, t.argv(dir, args...), strings.NewReader(""), w, w)
	if w.dropped > 0 {
		fmt.Fprintf(t.w, "(… %d more lines)\n", w.dropped)
	}
	if code != want {
		return fmt.Errorf("demo: cairn %s exited %d, expected %d", strings.Join(args, " "), code, want)
	}
	return nil
}

// items runs a cairn command with --json, unseen, and returns its items.
func (t *tour) items(dir string, args ...string) ([]map[string]any, error) {
	var out, errs bytes.Buffer
	if code := Main(t.a.ctx, t.argv(dir, append([]string{"--json"}, args...)...), strings.NewReader(""), &out, &errs); code != exitOK {
		return nil, fmt.Errorf("demo: cairn %s exited %d: %s", strings.Join(args, " "), code, strings.TrimSpace(errs.String()))
	}
	var v struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		return nil, fmt.Errorf("demo: cairn %s: %w", strings.Join(args, " "), err)
	}
	return v.Items, nil
}

// lineCap passes on the first max lines written to it (all when max is 0)
// and counts the rest. It may be written from several goroutines (an
// ingest's jobs report as they run).
type lineCap struct {
	w       io.Writer
	max     int
	mu      sync.Mutex
	lines   int
	dropped int
}

func (c *lineCap) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max == 0 {
		return c.w.Write(p)
	}
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if c.lines < c.max {
			if _, err := c.w.Write(line); err != nil {
				return 0, err
			}
		} else if bytes.HasSuffix(line, []byte("\n")) {
			c.dropped++
		}
		if bytes.HasSuffix(line, []byte("\n")) {
			c.lines++
		}
	}
	return len(p), nil
}

// quote writes arguments as a shell would need them.
func quote(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		switch {
		case !strings.ContainsAny(s, " \t\"'$`\\*?;&|<>()#~"):
		case !strings.Contains(s, "'"):
			s = "'" + s + "'"
		case !strings.ContainsAny(s, "\"$`\\"):
			s = `"` + s + `"`
		default:
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		out[i] = s
	}
	return out
}

// show prints some lines of a file in the vault's folder, under a label.
func (t *tour) show(label string, lines []string) {
	fmt.Fprintf(t.w, "\n(%s)\n", label)
	for _, l := range lines {
		if l == "" {
			fmt.Fprintln(t.w)
			continue
		}
		fmt.Fprintf(t.w, "  %s\n", l)
	}
}

// readLines reads a file in the vault's folder.
func readLines(dir, path string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n"), nil
}

// paperMills is the fourth source, the one the command agent gets.
const paperMills = `# Paper mills in the German lands

Until the late fourteenth century, the paper used in the German lands came
from Italian mills. In 1390 the Nuremberg merchant Ulman Stromer set up the
first paper mill there, with workers brought from Italy.

By the time printing began in Mainz, mills worked along many rivers of the
Empire. Printers could buy paper nearer home, though fine Italian paper was
still prized for books meant to last.
`

func (a *cli) demo(root string) error {
	t := &tour{a: a, w: a.stdout}
	vaultDir := filepath.Join(root, "vault")
	sourcesDir := filepath.Join(root, "sources")
	script := filepath.Join(root, "delete-a-page.sh")
	fourth := filepath.Join(root, "paper-mills.md")
	if err := copyEmbedded(sample.Vault, "vault", vaultDir, 0o644); err != nil {
		return err
	}
	if err := copyEmbedded(sample.Sources, "sources", sourcesDir, 0o644); err != nil {
		return err
	}
	if os.Getenv("CAIRN_USER") == "" && a.as == "" {
		os.Setenv("CAIRN_USER", "demo")
	}
	var held int64      // the proposal the command agent's change became
	var fourthID string // the fourth source's id
	var sampleLog int   // how many lines log.md had before any ingest
	names := []string{"paper-and-ink.md", "reading-revolution.md", "venetian-presses.txt"}
	steps := []func() error{
		func() error {
			t.section("A folder becomes a vault")
			t.say(`This folder holds a small research brain about early printing in the Eva
layout: an index, a log, entities, concepts, source summaries and analyses,
18 pages linked with Obsidian's [[wikilinks]], and their sources under raw/.

  ` + vaultDir + `

cairn init adopts it as the first commit of the branch main; the folder
stays plain Markdown. The commands below run in it.`)
			if err := t.run(vaultDir, exitOK, "init", "-m", "adopt the printing brain"); err != nil {
				return err
			}
			t.say(`Lint finds two things the brain already had: a link to a page nobody has
written yet, and a page without a type.`)
			lines, err := readLines(vaultDir, "log.md")
			if err != nil {
				return err
			}
			sampleLog = len(lines)
			return t.run(vaultDir, exitOK, "lint")
		},
		func() error {
			t.section("Ingest three sources")
			t.say(`Three new sources wait beside the vault, in ../sources. cairn ingest stores
each under raw/, commits it to main, records it and queues a job, all in one
transaction; then it runs the jobs here, side by side. A job hands its
source to the vault's agent, and the agent's change goes through admission,
the gates every change to main passes: it is admitted, held for a person,
or rejected. The default agent, extractive, is offline: it writes
summaries/<name>.md from the source's key passages (chosen by TextRank),
links it to the pages the source names, and lists it in index.md.`)
			shown := []string{"ingest"}
			args := []string{"ingest"}
			for _, n := range names {
				shown = append(shown, "../sources/"+n)
				args = append(args, filepath.Join(sourcesDir, n))
			}
			return t.runShown(vaultDir, exitOK, 0, shown, args)
		},
		func() error {
			t.section("What the agent wrote")
			t.say(`Each source is named by the SHA-256 of its content, and the same content is
never ingested twice. Every change to main is a proposal, numbered: 1 was
the adoption, 2 stored the three sources.`)
			if err := t.run(vaultDir, exitOK, "sources"); err != nil {
				return err
			}
			t.say(`One of the summaries, as main has it (the folder holds the same file):`)
			if err := t.run(vaultDir, exitOK, "show", "main:summaries/reading-revolution.md"); err != nil {
				return err
			}
			lines, err := readLines(vaultDir, "index.md")
			if err != nil {
				return err
			}
			var listed []string
			for _, l := range lines {
				if strings.Contains(l, "[[summaries/") && !strings.Contains(l, "summaries/mainz") &&
					!strings.Contains(l, "summaries/incunabula") && !strings.Contains(l, "summaries/pamphlet") {
					listed = append(listed, l)
				}
			}
			t.show("index.md in the folder: the lines the agent added", listed)
			if lines, err = readLines(vaultDir, "log.md"); err != nil {
				return err
			}
			t.say(`Agents may not touch log.md: cairn appends an entry in Eva's format in the
transaction that admits the change.`)
			t.show("log.md in the folder: the new entries", lines[min(sampleLog+1, len(lines)):])
			t.say(`Lint reports the same two findings as before. A change that brought a new
warning would have been held for review instead of admitted.`)
			return t.run(vaultDir, exitOK, "lint")
		},
		func() error {
			t.section("Text in a source is data")
			lines, err := readLines(vaultDir, "raw/reading-revolution.md")
			if err != nil {
				return err
			}
			for i, l := range lines {
				if strings.HasPrefix(l, "Note to AI assistants") {
					t.show(fmt.Sprintf("raw/reading-revolution.md, line %d", i+1), []string{l})
				}
			}
			t.say(`One source hides a prompt injection, and nothing happened: index.md is
still there, with its three new lines. The extractive agent follows no
instructions at all; every agent's prompt says that text inside a source is
data to summarize, never instructions; and whatever an agent does anyway
goes through the gates, as the next agent shows.`)
			return nil
		},
		func() error {
			t.section("A command agent that deletes a page")
			data, err := sample.Agents.ReadFile("agents/delete-a-page.sh")
			if err != nil {
				return err
			}
			if err := os.WriteFile(script, data, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(script, 0o755); err != nil { // whatever the umask
				return err
			}
			t.say(`The command runtime runs any agent CLI, with the prompt on its standard
input and a workspace folder holding main's files as its current folder.
Here the agent is a careless shell script, written to ../delete-a-page.sh:`)
			code := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			for len(code) > 1 && strings.HasPrefix(code[1], "# ") {
				code = append(code[:1], code[2:]...) // the comment after #!
			}
			t.show("delete-a-page.sh, without its comment", code)
			t.say(`The vault's settings live in cairn.yaml, which only people may change; each
change is a commit. The command comes first (the runtime needs it):`)
			if err := t.run(vaultDir, exitOK, "settings", "set", "agent.command", shellWord(script)); err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "settings", "set", "agent.runtime", "command"); err != nil {
				return err
			}
			if confine.Available() == 0 {
				t.say(`This system has no Landlock (macOS, or an older Linux kernel), and cairn
refuses to run a command agent unconfined unless the vault allows it:`)
				if err := t.run(vaultDir, exitOK, "settings", "set", "agent.unconfined", "allow"); err != nil {
					return err
				}
			}
			if err := os.WriteFile(fourth, []byte(paperMills), 0o644); err != nil {
				return err
			}
			t.say(`Now a fourth source, a note on paper mills (../paper-mills.md). An agent
that deletes a page gets its change held for a person, so ingest exits 1:`)
			return t.runShown(vaultDir, exitRefused, 0, []string{"ingest", "../paper-mills.md"}, []string{"ingest", fourth})
		},
		func() error {
			t.section("Confined, and kept as a branch")
			props, err := t.items(vaultDir, "review", "list")
			if err != nil {
				return err
			}
			if len(props) != 1 {
				return fmt.Errorf("demo: %d proposals are held, expected 1", len(props))
			}
			id, _ := props[0]["id"].(float64)
			held = int64(id)
			if confine.Available() > 0 {
				t.say(`The script ran confined by Landlock: the kernel let it write only in its
workspace and a private temp folder, and read only those, the system's own
files and the script itself: not the vault's database, not your home.`)
			} else {
				t.say(`The script ran unconfined, and cairn compared snapshots of the vault's
folder taken before and after, and checked .cairn/: a write outside the
workspace would be found and rejected.`)
			}
			t.say(fmt.Sprintf(`A run has a time limit and an inactivity watchdog, and when it ends its
whole process tree is stopped. The workspace became the proposal, kept as
the branch proposals/%d; its commit says how the agent was confined:`, held))
			show := []string{"show", fmt.Sprintf("proposals/%d", held)}
			return t.runShown(vaultDir, exitOK, 7, show, show)
		},
		func() error {
			t.section("A person reviews it")
			id := fmt.Sprint(held)
			if err := t.run(vaultDir, exitOK, "review", "list"); err != nil {
				return err
			}
			t.say(`The findings say why: the deletion, and every link it would break.`)
			if err := t.runShown(vaultDir, exitOK, 24, []string{"review", "show", id, "--color", "never"},
				[]string{"review", "show", id, "--color", "never"}); err != nil {
				return err
			}
			t.say(`cairn review accept would merge it anyway. But the page is not out of date,
so it is rejected:`)
			if err := t.run(vaultDir, exitOK, "review", "reject", id, "--reason", "concepts/paper.md is not out of date"); err != nil {
				return err
			}
			srcs, err := t.items(vaultDir, "sources")
			if err != nil {
				return err
			}
			for _, s := range srcs {
				if s["name"] == "paper-mills.md" {
					fourthID, _ = s["id"].(string)
				}
			}
			if len(fourthID) < 12 {
				return fmt.Errorf("demo: the source paper-mills.md is not recorded")
			}
			if err := t.run(vaultDir, exitOK, "sources", "--status", "rejected"); err != nil {
				return err
			}
			lines, err := readLines(vaultDir, "log.md")
			if err != nil {
				return err
			}
			t.show("log.md in the folder: the last entry", lines[max(0, len(lines)-2):])
			t.say(`The source stays in raw/ as the record of what was rejected, and stays
rejected: ingesting the same content again does nothing.`)
			return t.runShown(vaultDir, exitRefused, 0, []string{"ingest", "../paper-mills.md"}, []string{"ingest", fourth})
		},
		func() error {
			t.section("Retried, with the extractive agent and a worker")
			t.say(`Back to the extractive agent, and the source is retried. A retry only
queues the job again; cairn worker runs queued jobs until it is stopped
(Ctrl-C), and several workers may share a vault. With --drain it stops by
itself once nothing is queued or running.`)
			if err := t.run(vaultDir, exitOK, "settings", "set", "agent.runtime", "extractive"); err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "sources", "retry", fourthID[:12]); err != nil {
				return err
			}
			return t.run(vaultDir, exitOK, "worker", "--drain")
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	t.say(fmt.Sprintf(`That is the ingest story. The vault is in %s
(open it in Obsidian if you like); in that folder, try cairn log, cairn
review list --status all or cairn settings. cairn --help lists every command.`, vaultDir))
	return nil
}

// shellWord quotes a path for agent.command, which is split like a shell
// would split it, when the path holds spaces or quotes.
func shellWord(s string) string {
	if !strings.ContainsAny(s, " \t\"'\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// copyEmbedded copies the folder from of an embedded file system into dir.
func copyEmbedded(fsys fs.ReadFileFS, from, dir string, mode os.FileMode) error {
	return fs.WalkDir(fsys, from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, from)))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fsys.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, mode)
	})
}
