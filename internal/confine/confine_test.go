package confine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/internal/confine"
)

// agents are the helper agents of the tests, by the value of
// CONFINE_TEST_AGENT: each reports what it could and could not do.
var agents = map[string]func() int{}

// TestMain lets the test binary serve as Spec.Self (the confinement
// wrapper), as a helper agent that reports the errno of its writes or
// reads (or does what one of agents does), and as a process that runs an
// agent, for a test to kill.
func TestMain(m *testing.M) {
	confine.MaybeExec()
	if name := os.Getenv("CONFINE_TEST_AGENT"); name != "" {
		agent, ok := agents[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no helper agent %q\n", name)
			os.Exit(2)
		}
		os.Exit(agent())
	}
	if paths := os.Getenv("CONFINE_TEST_WRITE"); paths != "" {
		os.Exit(writeHelper(filepath.SplitList(paths)))
	}
	if paths := os.Getenv("CONFINE_TEST_READ"); paths != "" {
		os.Exit(readHelper(filepath.SplitList(paths)))
	}
	if spec := os.Getenv("CONFINE_TEST_SUPERVISE"); spec != "" {
		os.Exit(superviseHelper(spec))
	}
	os.Exit(m.Run())
}

// writeHelper writes each path and prints "ok <path>", "EACCES <path>",
// "ENOENT <path>" or "error <path>: <err>".
func writeHelper(paths []string) int {
	for _, p := range paths {
		err := os.WriteFile(p, []byte("written\n"), 0o644)
		switch {
		case err == nil:
			fmt.Println("ok", p)
		case errors.Is(err, syscall.EACCES):
			fmt.Println("EACCES", p)
		case errors.Is(err, syscall.ENOENT):
			fmt.Println("ENOENT", p)
		default:
			fmt.Printf("error %s: %v\n", p, err)
		}
	}
	return 0
}

// denied rewrites the lines "EACCES <path>" and "ENOENT <path>" as "denied
// <path>": a confined agent in a mount namespace of its own does not find
// the paths of the folders it hides, and Landlock refuses the others.
func denied(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if p, ok := strings.CutPrefix(l, "EACCES "); ok {
			l = "denied " + p
		} else if p, ok := strings.CutPrefix(l, "ENOENT "); ok {
			l = "denied " + p
		}
		out[i] = l
	}
	return out
}

// helperSpec is what superviseHelper runs.
type helperSpec struct {
	Argv      []string
	Dir, Temp string
	Read, Env []string
}

// superviseHelper runs the spec in CONFINE_TEST_SUPERVISE, printing the
// agent's lines: the process a test kills.
func superviseHelper(payload string) int {
	var p helperSpec
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	spec := confine.Spec{Argv: p.Argv, Dir: p.Dir, Temp: p.Temp, Read: p.Read, Env: p.Env}
	w := bufio.NewWriter(os.Stdout)
	spec.Output = func(stream, line string) {
		fmt.Fprintln(w, line)
		w.Flush()
	}
	res, err := confine.Run(context.Background(), spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintf(w, "result %+v\n", res)
	w.Flush()
	return 0
}

// setup returns a spec with a fresh workspace and temp folder, a short
// grace, and a timeout that keeps a broken test from hanging.
func setup(t *testing.T) confine.Spec {
	t.Helper()
	root := t.TempDir()
	spec := confine.Spec{
		Dir:     filepath.Join(root, "work"),
		Temp:    filepath.Join(root, "tmp"),
		Timeout: time.Minute,
		Grace:   200 * time.Millisecond,
	}
	for _, dir := range []string{spec.Dir, spec.Temp} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return spec
}

// script writes a /bin/sh script outside the workspace, in a folder the
// agent may read, and makes spec run it. Running it through sh, rather
// than exec'ing the file, avoids ETXTBSY when a parallel test forks while
// the file is open.
func script(t *testing.T, spec *confine.Spec, body string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	spec.Argv = []string{"sh", path}
	spec.Read = append(spec.Read, dir)
}

// helper makes spec run the test binary as the helper agent name, with the
// environment env (KEY=VALUE) on top.
func helper(t *testing.T, spec *confine.Spec, name string, env ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec.Argv = []string{self}
	spec.Read = append(spec.Read, self)
	spec.Env = append(append(spec.Env, "CONFINE_TEST_AGENT="+name), env...)
}

// output collects the lines a run prints, per stream.
type output map[string][]string

func (o output) record(stream, line string) { o[stream] = append(o[stream], line) }

func run(t *testing.T, ctx context.Context, spec confine.Spec) *confine.Result {
	t.Helper()
	res, err := confine.Run(ctx, spec)
	if err != nil {
		t.Fatalf("Run(%q) = %v", spec.Argv, err)
	}
	return res
}

// landlock skips the test when the kernel offers no Landlock.
func landlock(t *testing.T) {
	t.Helper()
	if confine.Available() == 0 {
		t.Skip("the kernel offers no Landlock")
	}
}

func TestAvailable_Off(t *testing.T) {
	t.Setenv("CAIRN_LANDLOCK", "off")
	if got := confine.Available(); got != 0 {
		t.Errorf("Available() with CAIRN_LANDLOCK=off = %d, want 0", got)
	}
}

func TestRun_Landlock(t *testing.T) {
	landlock(t)

	t.Run("EACCES", func(t *testing.T) {
		spec := setup(t)
		outside := t.TempDir()
		inside := []string{filepath.Join(spec.Dir, "in.txt"), filepath.Join(spec.Temp, "tmp.txt"), "/dev/null"}
		refused := []string{filepath.Join(outside, "out.txt"), filepath.Join(filepath.Dir(spec.Dir), "parent.txt")}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		out := output{}
		spec.Argv = []string{self}
		spec.Env = []string{"CONFINE_TEST_WRITE=" + strings.Join(append(inside, refused...), string(filepath.ListSeparator))}
		spec.Output = out.record
		res := run(t, t.Context(), spec)

		if res.Mode != confine.ModeLandlock || res.ExitCode != 0 || res.Outside != nil {
			t.Errorf("Run() = %+v, want mode landlock, exit 0, nothing outside", res)
		}
		var want []string
		for _, p := range inside {
			want = append(want, "ok "+p)
		}
		for _, p := range refused {
			want = append(want, "denied "+p)
		}
		if diff := cmp.Diff(want, denied(out["stdout"])); diff != "" {
			t.Errorf("writes (-want +got):\n%s\nstderr: %q", diff, out["stderr"])
		}
		for _, p := range refused {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Lstat(%s) = %v, want it not to exist", p, err)
			}
		}
	})

	t.Run("Shell", func(t *testing.T) {
		spec := setup(t)
		outside := t.TempDir()
		existing := filepath.Join(outside, "existing.txt")
		if err := os.WriteFile(existing, []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := output{}
		spec.Env = []string{"OUTSIDE=" + outside}
		spec.Output = out.record
		script(t, &spec, `
set -u
echo inside > inside.txt || exit 10
mkdir sub && echo x > sub/f && mv sub/f sub/g && ln -s g sub/link && rm -r sub || exit 11
echo temp > "$TMPDIR/temp.txt" && mv "$TMPDIR/temp.txt" moved.txt || exit 12
echo quiet > /dev/null && : > /dev/null || exit 13
try() { if "$@" 2>/dev/null; then echo "escaped: $*"; fi; }
try sh -c 'echo bad > "$OUTSIDE/new.txt"'
try sh -c 'echo bad > ../parent.txt'
try sh -c 'echo bad >> "$OUTSIDE/existing.txt"'
try sh -c ': > "$OUTSIDE/existing.txt"'
try rm "$OUTSIDE/existing.txt"
try mkdir "$OUTSIDE/dir"
try ln -s inside.txt "$OUTSIDE/sym"
try ln inside.txt "$OUTSIDE/hard"
try ln "$OUTSIDE/existing.txt" hard
try mv inside.txt "$OUTSIDE/moved.txt"
try mv "$OUTSIDE/existing.txt" stolen.txt
exit 0
`)
		res := run(t, t.Context(), spec)

		if res.ExitCode != 0 || len(out["stdout"]) > 0 {
			t.Fatalf("Run() exit %d, stdout %q, stderr %q; want exit 0 and nothing escaped", res.ExitCode, out["stdout"], out["stderr"])
		}
		for _, name := range []string{"inside.txt", "moved.txt"} {
			if _, err := os.Stat(filepath.Join(spec.Dir, name)); err != nil {
				t.Errorf("inside write: %v", err)
			}
		}
		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Errorf("outside folder holds %d entries, want only existing.txt", len(entries))
		}
		if b, err := os.ReadFile(existing); err != nil || string(b) != "keep\n" {
			t.Errorf("ReadFile(%s) = %q, %v; want it unchanged", existing, b, err)
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(spec.Dir), "parent.txt")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("parent.txt: %v, want it not to exist", err)
		}
	})
}

func TestRun_Snapshot(t *testing.T) {
	t.Setenv("CAIRN_LANDLOCK", "off")

	setupVault := func(t *testing.T) (confine.Spec, string) {
		spec := setup(t)
		vault := t.TempDir()
		for name, content := range map[string]string{
			"existing.md":   "old\n",
			"gone.md":       "old\n",
			"notes/keep.md": "keep\n",
			"db.sqlite":     "db\n",
		} {
			path := filepath.Join(vault, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The workspace sits in the watched folder: its writes are not
		// outside writes.
		spec.Dir = filepath.Join(vault, "work")
		if err := os.Mkdir(spec.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		spec.Watch = []string{vault}
		spec.WatchSkip = []string{filepath.Join(vault, "db.sqlite")}
		spec.Env = []string{"VAULT=" + vault}
		return spec, vault
	}

	t.Run("Outside", func(t *testing.T) {
		spec, vault := setupVault(t)
		script(t, &spec, `
echo new > "$VAULT/notes/new.md"
echo more >> "$VAULT/existing.md"
rm "$VAULT/gone.md"
echo more >> "$VAULT/db.sqlite"
mkdir sub && echo inside > sub/inside.txt
echo temp > "$TMPDIR/temp.txt"
`)
		res := run(t, t.Context(), spec)

		want := []string{
			filepath.Join(vault, "existing.md"),
			filepath.Join(vault, "gone.md"),
			filepath.Join(vault, "notes", "new.md"),
		}
		if res.Mode != confine.ModeSnapshot || res.ExitCode != 0 {
			t.Errorf("Run() = %+v, want mode snapshot, exit 0", res)
		}
		if diff := cmp.Diff(want, res.Outside); diff != "" {
			t.Errorf("Outside (-want +got):\n%s", diff)
		}
	})

	t.Run("Clean", func(t *testing.T) {
		spec, _ := setupVault(t)
		script(t, &spec, `echo inside > inside.txt; cat "$VAULT/existing.md" > copy.md`)
		res := run(t, t.Context(), spec)
		if res.Mode != confine.ModeSnapshot || res.Outside != nil {
			t.Errorf("Run() = %+v, want mode snapshot, nothing outside", res)
		}
	})
}

func TestRun_Output(t *testing.T) {
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == confine.ModeLandlock {
				landlock(t)
			} else {
				t.Setenv("CAIRN_LANDLOCK", "off")
			}
			spec := setup(t)
			out := output{}
			spec.Output = out.record
			spec.Stdin = []byte("a\nb\nc\n")
			script(t, &spec, `
while IFS= read -r line; do echo "got $line"; done
echo "tmp=$TMPDIR"
echo "wrapper=${CAIRN_CONFINE-unset}"
echo e1 >&2
echo e2 >&2
head -c 70000 /dev/zero | tr '\0' x
echo
echo
printf 'crlf\r\n'
printf last
exit 3
`)
			res := run(t, t.Context(), spec)

			if res.Mode != mode || res.ExitCode != 3 || res.Reason != "" {
				t.Errorf("Run() = %+v, want mode %s, exit 3, no reason", res, mode)
			}
			want := output{
				"stdout": {
					"got a", "got b", "got c",
					"tmp=" + spec.Temp,
					"wrapper=unset",
					strings.Repeat("x", 64<<10), strings.Repeat("x", 70000-64<<10),
					"",
					"crlf",
					"last",
				},
				"stderr": {"e1", "e2"},
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRun_ErrNotFound(t *testing.T) {
	spec := setup(t)
	for _, tt := range []struct {
		name string
		argv string
		want error
	}{
		{"InPath", "cairn-no-such-agent", exec.ErrNotFound},
		{"Relative", "./no-such-agent", fs.ErrNotExist},
		{"Absolute", "/no/such/agent", fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec.Argv = []string{tt.argv}
			res, err := confine.Run(t.Context(), spec)
			if !errors.Is(err, tt.want) || cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("Run(%q) = %+v, %v; want %v with code %s", tt.argv, res, err, tt.want, cairn.EINVALID)
			}
		})
	}
}

func TestRun_ErrCancelled(t *testing.T) {
	spec := setup(t)
	spec.Argv = []string{"sh", "-c", "echo started > started.txt"}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if res, err := confine.Run(ctx, spec); !errors.Is(err, context.Canceled) {
		t.Errorf("Run() with a cancelled context = %+v, %v; want %v", res, err, context.Canceled)
	}
	if _, err := os.Stat(filepath.Join(spec.Dir, "started.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the agent ran: Stat(started.txt) = %v", err)
	}
}

func TestSpec_Validate(t *testing.T) {
	valid := confine.Spec{Argv: []string{"sh"}, Dir: "/work", Temp: "/tmp/agent"}
	if err := valid.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v, want nil", valid, err)
	}
	for _, tt := range []struct {
		name   string
		change func(*confine.Spec)
	}{
		{"NoArgv", func(s *confine.Spec) { s.Argv = nil }},
		{"EmptyCommand", func(s *confine.Spec) { s.Argv = []string{""} }},
		{"RelativeDir", func(s *confine.Spec) { s.Dir = "work" }},
		{"NoTemp", func(s *confine.Spec) { s.Temp = "" }},
		{"RelativeSelf", func(s *confine.Spec) { s.Self = "cairn" }},
		{"RelativeWatch", func(s *confine.Spec) { s.Watch = []string{"vault"} }},
		{"RelativeSkip", func(s *confine.Spec) { s.WatchSkip = []string{"vault/db"} }},
		{"RelativeHome", func(s *confine.Spec) { s.Home = "home" }},
		{"RelativeRead", func(s *confine.Spec) { s.Read = []string{"tools"} }},
		{"RelativeDeny", func(s *confine.Spec) { s.Deny = []string{".cairn"} }},
		{"NegativeTimeout", func(s *confine.Spec) { s.Timeout = -time.Second }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := valid
			tt.change(&spec)
			if err := spec.Validate(); cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("Validate(%+v) = %v, want code %s", spec, err, cairn.EINVALID)
			}
			if _, err := confine.Run(t.Context(), spec); cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("Run(%+v) = %v, want code %s", spec, err, cairn.EINVALID)
			}
		})
	}

	// The message is what a person reads: it names the list the entry is
	// in, not the read set.
	t.Run("DenyNamed", func(t *testing.T) {
		spec := valid
		spec.Deny = []string{".cairn"}
		err := spec.Validate()
		if msg := fmt.Sprint(err); !strings.Contains(msg, "deny") || strings.Contains(msg, "read") {
			t.Errorf("Validate() with Deny %q = %q, want a message about the deny folder", spec.Deny, msg)
		}
	})

	t.Run("MissingDir", func(t *testing.T) {
		spec := setup(t)
		spec.Argv = []string{"sh", "-c", "true"}
		spec.Dir = filepath.Join(spec.Dir, "missing")
		if _, err := confine.Run(t.Context(), spec); !errors.Is(err, fs.ErrNotExist) || cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Run() in a missing folder = %v, want not-exist with code %s", err, cairn.EINVALID)
		}
	})
}

// TestMaybeExec runs the test binary as the wrapper by hand, to check that a
// wrapper that cannot exec the agent fails with a shell's exit codes.
func TestMaybeExec(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name     string
		landlock bool
		payload  string
		want     int
	}{
		{"BadJSON", false, `{`, 126},
		{"NoCommand", false, `{"write":["` + dir + `"]}`, 126},
		{"MissingFolder", true, `{"landlock":true,"write":["` + dir + `/missing"],"path":"/bin/true","argv":["true"]}`, 126},
		{"MissingRead", true, `{"landlock":true,"read":["` + dir + `/missing"],"path":"/bin/true","argv":["true"]}`, 126},
		{"MissingCommand", true, `{"landlock":true,"write":["` + dir + `"],"path":"/no/such/agent","argv":["agent"]}`, 127},
		{"OK", true, `{"landlock":true,"write":["` + dir + `"],"path":"/bin/sh","argv":["sh","-c","exit 7"]}`, 7},
		{"Unconfined", false, `{"path":"/bin/sh","argv":["sh","-c","exit 7"]}`, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.landlock {
				landlock(t)
			}
			cmd := exec.Command(self, "-cairn-confine-wrapper")
			cmd.Env = append(os.Environ(), "CAIRN_CONFINE="+tt.payload)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if got := cmd.ProcessState.ExitCode(); got != tt.want || (err != nil && !errors.As(err, &exit)) {
				t.Errorf("wrapper with %s: exit %d, %v, want exit %d; output:\n%s", tt.payload, got, err, tt.want, out)
			}
		})
	}
}

func BenchmarkRun_Snapshot10k(b *testing.B) {
	b.Setenv("CAIRN_LANDLOCK", "off")
	vault := b.TempDir()
	for i := range 10000 {
		path := filepath.Join(vault, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("page%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("# page\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	dir, temp := b.TempDir(), b.TempDir()
	spec := confine.Spec{Argv: []string{"true"}, Dir: dir, Temp: temp, Watch: []string{vault}}
	for b.Loop() {
		res, err := confine.Run(b.Context(), spec)
		if err != nil || res.Outside != nil {
			b.Fatalf("Run() = %+v, %v", res, err)
		}
	}
}
