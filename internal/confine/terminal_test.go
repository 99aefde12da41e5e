//go:build linux

package confine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"cairn/internal/confine"
)

func init() { agents["terminal"] = terminalAgent }

// terminalAgent tries to type into a terminal. It opens each path in
// CONFINE_TEST_TTYS for reading and writing (which makes a terminal the
// controlling one of a session leader that has none), then tries TIOCSTI
// on every descriptor it holds, and TCGETS on /dev/null. It prints "open
// <path> <outcome>", "tiocsti <fd> ok" for each descriptor it could type
// into, and "ioctl /dev/null <outcome>".
func terminalAgent() int {
	for _, p := range filepath.SplitList(os.Getenv("CONFINE_TEST_TTYS")) {
		_, err := unix.Open(p, unix.O_RDWR, 0) // left open
		fmt.Println("open", p, outcome(err))
	}
	c := byte('#')
	for fd := range 1024 {
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); errno == 0 {
			fmt.Println("tiocsti", fd, "ok")
		}
	}
	fd, err := unix.Open("/dev/null", unix.O_RDWR, 0)
	if err == nil {
		_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
	}
	fmt.Println("ioctl /dev/null", outcome(err))
	return 0
}

// superviseFrom runs spec in a child process (superviseHelper) started
// with attr and extra as its descriptors 3 and on, with env on top of this
// process's environment, and returns the lines it printed, the agent's
// and then its result.
func superviseFrom(t *testing.T, spec confine.Spec, attr *syscall.SysProcAttr, stdin *os.File, extra []*os.File, env ...string) []string {
	t.Helper()
	payload, err := json.Marshal(helperSpec{Argv: spec.Argv, Dir: spec.Dir, Temp: spec.Temp, Read: spec.Read, Env: spec.Env})
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(append(os.Environ(), env...), "CONFINE_TEST_SUPERVISE="+string(payload))
	cmd.SysProcAttr = attr
	cmd.Stdin = stdin
	cmd.ExtraFiles = extra
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the process running the agent: %v; stderr:\n%s", err, stderr.String())
	}
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
}

// openPTY returns a new pseudo-terminal's controlling side, its terminal
// side (in raw mode, so that every byte typed counts as input) and the
// terminal side's path.
func openPTY(t *testing.T) (ptm, pts *os.File, path string) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ptm = os.NewFile(uintptr(m), "/dev/ptmx")
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	path = "/dev/pts/" + strconv.Itoa(int(n))
	s, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	pts = os.NewFile(uintptr(s), path)
	t.Cleanup(func() { pts.Close() })
	tio, err := unix.IoctlGetTermios(s, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Lflag &^= unix.ICANON | unix.ECHO
	if err := unix.IoctlSetTermios(s, unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return ptm, pts, path
}

// TestRun_Terminal runs the agent from a process whose controlling
// terminal is a pseudo-terminal, as `cairn ingest` typed at a shell is: the
// agent can neither open /dev/tty nor type into any terminal with TIOCSTI
// (it starts in a session of its own, without a controlling terminal, and
// Landlock grants no terminal), and where Landlock has ABI 5 no ioctl on a
// device it opened works. Nothing reaches the terminal's input.
func TestRun_Terminal(t *testing.T) {
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		for _, contain := range []confine.Containment{confine.ContainNamespace, confine.ContainTracking} {
			t.Run(string(mode)+"/"+string(contain), func(t *testing.T) {
				var env []string
				if mode == confine.ModeLandlock {
					landlock(t)
				} else {
					env = append(env, "CAIRN_LANDLOCK=off")
				}
				if contain == confine.ContainNamespace {
					namespaces(t)
				} else {
					env = append(env, "CAIRN_PIDNS=off")
				}
				_, pts, path := openPTY(t)
				spec := setup(t)
				helper(t, &spec, "terminal", "CONFINE_TEST_TTYS=/dev/tty"+string(filepath.ListSeparator)+path)
				got := superviseFrom(t, spec, &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, pts, nil, env...)

				if len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "result ") {
					t.Fatalf("the agent printed %q, want its lines and a result", got)
				}
				for _, l := range got {
					if strings.HasPrefix(l, "tiocsti") || l == "open /dev/tty ok" || (mode == confine.ModeLandlock && l == "open "+path+" ok") {
						t.Errorf("the agent reached the terminal: %s", l)
					}
				}
				if mode == confine.ModeLandlock && confine.Available() >= 5 && !contains(got, "ioctl /dev/null EACCES") {
					t.Errorf("the agent printed %q, want ioctl on /dev/null refused (EACCES)", got)
				}
				if n, err := unix.IoctlGetInt(int(pts.Fd()), unix.TIOCINQ); err != nil || n != 0 {
					t.Errorf("the terminal's input holds %d bytes (%v), want none", n, err)
				}
			})
		}
	}
}

func contains(lines []string, line string) bool {
	for _, l := range lines {
		if l == line {
			return true
		}
	}
	return false
}
