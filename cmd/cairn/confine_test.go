//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// agentProcesses returns the pids of the processes whose command line
// holds word.
func agentProcesses(t *testing.T, word string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && bytes.Contains(b, []byte(word)) && !bytes.Contains(st, []byte(") Z ")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// outlived waits for each process, through a pidfd, for up to five
// seconds, and returns those still running then; it kills them.
func outlived(pids []int) []int {
	var left []int
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone
		}
		if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 5000); n != 1 {
			left = append(left, pid)
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	}
	return left
}

// TestCrashIngest_AgentTree kills cairn ingest (SIGKILL) while its command
// agent runs, with processes that left the agent's tree every way they can
// (double forks, setsid, an empty environment): none of them outlives
// cairn. A worker then rescues the jobs, and each source is accounted for
// once; nothing its agents started outlives those runs either.
func TestCrashIngest_AgentTree(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			token := fmt.Sprint(time.Now().UnixNano())
			agent := strings.ReplaceAll(`for i in 1 2 3; do
	(env -i setsid sh -c 'echo up > "$1"; exec sleep 1000.TOKEN' sh "$TMPDIR/up$i" &)
done
sleep 1000.TOKEN &
for i in 1 2 3; do while [ ! -s "$TMPDIR/up$i" ]; do sleep 0.01; done; done
job=$(basename "$(dirname "$PWD")") # job-<id>-<attempt>: in its PID namespace, the agent's $$ is the same every run
printf -- '---\ntitle: Mills '$job'\ntype: concept\n---\n# Mills\n\nSee [[concepts/paper|Paper]].\n' > concepts/mills-$job.md
sed -i 's|- \[\[concepts/ink|- [[concepts/mills-'$job'\|Mills]]\n- [[concepts/ink|' index.md
echo "Wrote a page on mills."
`, "TOKEN", token)
			_, vault, sources := ingestVault(t, agent)
			r := run(t, vault, []string{"CAIRN_CRASH_AT=agent:running"}, append([]string{"ingest"}, sources...)...)
			if r.signal != syscall.SIGKILL {
				t.Fatalf("cairn ingest was not killed while its agent ran: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			// They ran when cairn died (it dies on the agent's first line,
			// which comes once they are up); usually the kernel has
			// killed them all by now.
			running := agentProcesses(t, "1000."+token)
			if left := outlived(running); len(left) > 0 {
				t.Errorf("agent processes %v outlived the killed cairn ingest", left)
			}
			work(t, vault)
			accounted(t, vault, sources, "merged")
			if left := outlived(agentProcesses(t, "1000."+token)); len(left) > 0 {
				t.Errorf("agent processes %v outlived the worker's runs", left)
			}
		})
	}
}
