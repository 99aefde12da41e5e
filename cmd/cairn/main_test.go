package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"cairn/httpapi"
	"cairn/internal/confine"
	"cairn/vault"
)

// TestMain lets the test binary run as the cairn command, for testscript
// transcripts and for the child processes of the crash and concurrency
// tests.
func TestMain(m *testing.M) {
	confine.MaybeExec()
	testscript.Main(m, map[string]func(){
		"cairn":                func() { os.Exit(runCairn()) },
		"cairn-test-listen-as": func() { os.Exit(listenAs()) },
	})
}

// listenAs is the program cairn-test-listen-as PATH UID: an HTTP server
// on a Unix socket at PATH, which it binds as the user who runs it and
// listens on as user UID (the user a socket's peer credentials name). It
// prints "ready", then a line for each request: its method, path and
// Authorization header.
func listenAs() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cairn-test-listen-as PATH UID")
		return 2
	}
	uid, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: os.Args[1]})
	}
	if err == nil {
		err = syscall.Seteuid(uid)
	}
	if err == nil {
		err = syscall.Listen(fd, 16)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	ln, err := net.FileListener(os.NewFile(uintptr(fd), os.Args[1]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	var mu sync.Mutex
	fmt.Println("ready")
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fmt.Println(r.Method, r.URL.Path, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	}))
	return 1
}

// TestScripts runs the command-line transcripts in testdata/script: each
// is a session of real cairn commands on real files, with their output.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("CAIRN_USER", "tester")
			return nil
		},
		Condition: served(false),
	})
}

// TestScriptsServed runs the same transcripts through a server: before
// each command that can go through one, a cairn serve is started for the
// vault it works on (once: it stays up for the commands after), and the
// command must go through it: a command that would open the vault itself
// fails. Commands that work on this machine's folders or run jobs (init,
// import, export, worktree add and remove, worker, demo) open the vault
// themselves, beside the server, as they do for a user.
func TestScriptsServed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server for every vault of every transcript")
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("CAIRN_USER", "tester")
			servers := filepath.Join(env.WorkDir, ".servers")
			env.Setenv("CAIRN_TEST_SERVERS", servers)
			env.Defer(func() { stopServers(servers) })
			return nil
		},
		Condition: served(true),
	})
}

// served answers the transcripts' condition [served]: whether they run
// through a server.
func served(on bool) func(string) (bool, error) {
	return func(cond string) (bool, error) {
		if cond == "served" {
			return on, nil
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
}

// runCairn is the cairn command of the transcripts and of the child
// processes: the program itself, or, in the run through a server
// ($CAIRN_TEST_SERVERS), the program as a client of a server it starts
// first for the vault the command works on. With $CAIRN_TEST_MCP_FIXTURES
// set to 1 (TestConformance's fixture mode), the MCP servers of cairn serve
// and cairn mcp also serve the conformance suite's fixtures
// (conformanceFixtures).
func runCairn() int {
	gc := startCollector()
	servers := os.Getenv("CAIRN_TEST_SERVERS")
	args := os.Args[1:]
	served := servers != "" && throughServer(args)
	fixtures := os.Getenv("CAIRN_TEST_MCP_FIXTURES") == "1"
	if !served && !fixtures {
		return runMain(gc)
	}
	if served {
		if err := ensureServer(servers, args); err != nil {
			fmt.Fprintln(os.Stderr, "cairn (test): start a server:", err)
			return exitBug
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &cli{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, mustServe: served, gc: gc}
	if fixtures {
		a.mcpExtend = newConformanceFixtures().extend
	}
	return a.run(args)
}

// valueFlags are the global flags that take a value as the next argument.
var valueFlags = []string{"-C", "--vault", "--as", "--server", "--log-level", "--log-format"}

// command returns the command words of args (those that are not flags or
// their values), and the vault folder -C or --vault names.
func command(args []string) (words []string, dir string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case slices.Contains(valueFlags, a) && i+1 < len(args):
			if a == "-C" || a == "--vault" {
				dir = args[i+1]
			}
			i++
		case strings.HasPrefix(a, "--vault="):
			dir = strings.TrimPrefix(a, "--vault=")
		case strings.HasPrefix(a, "-"):
		default:
			words = append(words, a)
		}
	}
	return words, dir
}

// throughServer reports whether the command goes through a server when
// one runs: all but those that work on this machine's folders or run jobs.
func throughServer(args []string) bool {
	words, _ := command(args)
	if len(words) == 0 {
		return false
	}
	switch words[0] {
	case "init", "serve", "demo", "worker", "import", "export", "help", "completion":
		return false
	case "worktree":
		return len(words) > 1 && words[1] == "list"
	}
	return true
}

// ensureServer starts a server for the vault the command works on, unless
// one runs for it; it records the server's process in the folder servers,
// for stopServers. A folder in no vault needs none: the command says so.
func ensureServer(servers string, args []string) error {
	_, dir := command(args)
	dir = cmpOr(cmpOr(dir, os.Getenv("CAIRN_VAULT")), ".")
	loc, err := vault.Locate(dir)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(loc.Vault, vault.DirName, vault.DBName)); err != nil {
		return nil
	}
	if f, err := httpapi.ReadServerFile(loc.Vault); err == nil {
		c, err := httpapi.NewClient(f.URL, f.Token)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			info, err := c.Vault(ctx)
			cancel()
			switch {
			case err == nil && vault.SameFolder(info.Root, loc.Vault):
				return nil // it serves this vault
			case err == nil:
				if _, err := os.Stat(info.Root); errors.Is(err, os.ErrNotExist) {
					syscall.Kill(f.PID, syscall.SIGKILL) // it served this vault before it moved
				}
			}
		}
	}
	if err := os.MkdirAll(servers, 0o755); err != nil {
		return err
	}
	log, err := os.CreateTemp(servers, "serve-*.log")
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "-C", loc.Vault)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_TEST_SERVERS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	pids, err := os.OpenFile(filepath.Join(servers, "pids"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintln(pids, pid)
	pids.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			return fmt.Errorf("cairn serve exited (%v): %s", err, out)
		default:
		}
		if f, err := httpapi.ReadServerFile(loc.Vault); err == nil && f.PID == pid {
			return nil
		}
	}
	return fmt.Errorf("cairn serve (process %d) wrote no server file within 30s", pid)
}

// stopServers stops the servers the transcript started: SIGTERM, then
// after five seconds SIGKILL.
func stopServers(servers string) {
	data, err := os.ReadFile(filepath.Join(servers, "pids"))
	if err != nil {
		return
	}
	var pids []int
	for _, line := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(line); err == nil {
			pids = append(pids, pid)
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
