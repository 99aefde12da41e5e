package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn/postgres/pgtest"
)

// logOf returns cairn log --json of the vault at dir: every commit of main
// as the command prints it.
func logOf(t *testing.T, dir string) []json.RawMessage {
	t.Helper()
	r := run(t, dir, nil, "log", "--json", "--limit", "100000")
	must(t, r, "log")
	var out struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("log --json: %v\n%s", err, r.stdout)
	}
	return out.Items
}

// doctorOf runs cairn doctor --json at dir, which must find nothing, and
// returns its counts of what it checked.
func doctorOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	r := run(t, dir, nil, "doctor", "--json")
	must(t, r, "doctor")
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.stdout)
	}
	delete(out, "repaired")
	return out
}

// places attaches n folders to the vault in the database url, as n
// machines serving it would.
func places(t *testing.T, url string, n int) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		dir := filepath.Join(t.TempDir(), "place-"+strconv.Itoa(i))
		r := run(t, t.TempDir(), nil, "init", "--bare", "--database", url, dir)
		must(t, r, "init --bare --database")
		if !strings.Contains(r.stdout, "there already") {
			t.Fatalf("init of a place of an existing vault said:\n%s", r.stdout)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// TestPostgres_Init: a new vault in PostgreSQL, its folder, and what a
// command run there and with --database sees; the refusals.
func TestPostgres_Init(t *testing.T) {
	url := pgtest.URL(t)
	dir := filepath.Join(t.TempDir(), "v")
	r := run(t, t.TempDir(), nil, "init", "--database", url, dir)
	if r.code == 0 || !strings.Contains(r.stderr, "--bare") {
		t.Fatalf("init --database without --bare: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the refused init left %s", dir)
	}
	r = run(t, t.TempDir(), nil, "init", "--bare", "--database", url, dir)
	must(t, r, "init --bare --database")
	if fi, err := os.Stat(filepath.Join(dir, ".cairn", "database")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the database file: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".cairn", "cairn.db")); err == nil {
		t.Error("a vault in PostgreSQL has a SQLite file too")
	}
	must(t, run(t, dir, nil, "settings", "set", "server.rate", "1000"), "settings set")
	must(t, run(t, dir, nil, "doctor"), "doctor")
	inDir := logOf(t, dir)
	if len(inDir) == 0 || !strings.Contains(string(inDir[0]), "server.rate") {
		t.Errorf("log after a settings change: %s", inDir)
	}
	// --database from anywhere, and $CAIRN_DATABASE, open the same vault
	// (from a place of this machine's cache, made on first use).
	home := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + home, "CAIRN_DATABASE=" + url}
	r = run(t, t.TempDir(), env, "log", "--json", "--limit", "100000")
	must(t, r, "log with $CAIRN_DATABASE")
	var out struct{ Items []json.RawMessage }
	json.Unmarshal([]byte(r.stdout), &out)
	if !slices.EqualFunc(out.Items, inDir, func(x, y json.RawMessage) bool { return string(x) == string(y) }) {
		t.Errorf("log with $CAIRN_DATABASE:\n%s\nin the vault's folder:\n%s", out.Items, inDir)
	}
	// Bad input: an unreachable server, a database without a vault, a
	// folder of another database.
	r = run(t, t.TempDir(), []string{"XDG_CACHE_HOME=" + home}, "log", "--database", "postgres://nobody:pw@127.0.0.1:1/x")
	if r.code == 0 || !strings.Contains(r.stderr, "127.0.0.1:1/x") || !strings.Contains(r.stderr, "Hint") || strings.Contains(r.stderr, ":pw@") {
		t.Errorf("an unreachable database: exit %d\n%s", r.code, r.stderr)
	}
	// A vault that cannot be made leaves nothing: not the folders init
	// made for it, nor .cairn/ in one that was there.
	above := t.TempDir()
	made := filepath.Join(above, "new", "er", "vault")
	there := t.TempDir()
	for _, d := range []string{made, there} {
		r = run(t, t.TempDir(), nil, "init", "--bare", "--database", "postgres://nobody:pw@127.0.0.1:1/x", d)
		if r.code == 0 || !strings.Contains(r.stderr, "127.0.0.1:1/x") || !strings.Contains(r.stderr, "Hint") {
			t.Errorf("init on an unreachable database: exit %d\n%s", r.code, r.stderr)
		}
	}
	if entries, err := os.ReadDir(above); err != nil || len(entries) != 0 {
		t.Errorf("a failed init left folders it made for %s: %v, %v", made, entries, err)
	}
	if entries, err := os.ReadDir(there); err != nil || len(entries) != 0 {
		t.Errorf("a failed init left in the folder that was there: %v, %v", entries, err)
	}
	r = run(t, t.TempDir(), []string{"XDG_CACHE_HOME=" + home}, "log", "--database", pgtest.URL(t))
	if r.code == 0 || !strings.Contains(r.stderr, "holds no vault") {
		t.Errorf("a database without a vault: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, dir, nil, "log", "--database", pgtest.URL(t))
	if r.code == 0 || !strings.Contains(r.stderr, "not the one in") {
		t.Errorf("--database of another vault in a vault's folder: exit %d\n%s", r.code, r.stderr)
	}
}

// TestPostgres_ServeLoad moves a SQLite vault into PostgreSQL with cairn
// copy (its log and doctor agree), serves it from three processes in
// three folders at once under a load of reads and changesets against
// their bases, and checks that no answer was a 5xx, that every change
// reported admitted is in main exactly once and every refused one absent,
// and that the event stream of one server carried the admissions made on
// the others, without a gap. Then it copies the vault back into SQLite.
func TestPostgres_ServeLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("three servers under load")
	}
	url := pgtest.URL(t)
	orig, pages, words := loadVault(t, 300)
	home := t.TempDir()
	r := run(t, orig, []string{"XDG_CACHE_HOME=" + home}, "copy", "--to", url)
	must(t, r, "copy --to postgres")
	dirs := places(t, url, 3)
	if a, b := logOf(t, orig), logOf(t, dirs[0]); !slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return string(x) == string(y) }) || len(a) == 0 {
		t.Fatalf("cairn log differs after the copy: %d commits in SQLite, %d in PostgreSQL", len(a), len(b))
	}
	da, db := doctorOf(t, orig), doctorOf(t, dirs[0])
	for _, k := range []string{"commits", "nodes", "blobs", "purged"} {
		if da[k] != db[k] {
			t.Errorf("doctor's %s: %v in SQLite, %v in PostgreSQL", k, da[k], db[k])
		}
	}

	var servers []*serveProc
	for _, d := range dirs {
		servers = append(servers, startServe(t, d))
	}
	ids, cancel := events(t, servers[0].file, 0)
	defer cancel()
	results := make([]*loadResult, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			results[i] = runLoad(t, s.file, loadConfig{clients: 8, duration: 5 * time.Second, pages: pages, words: words, writeEvery: 4, prefix: strconv.Itoa(i)})
		})
	}
	wg.Wait()
	all := &loadResult{status: map[int]int{}}
	for i, res := range results {
		t.Logf("server %d: %d reads, %d admitted, %d refused, %d unknown; statuses %v", i, len(res.reads), len(res.admitted), len(res.refused), len(res.unknown), res.status)
		if n := res.serverErrors(); n != 0 || res.transportErrors != 0 || res.readErrors != 0 || len(res.unknown) != 0 {
			t.Errorf("server %d: %d answers were 5xx, %d reads failed, %d requests got no answer, %d changes no clear outcome: %v",
				i, n, res.readErrors, res.transportErrors, len(res.unknown), res.status)
		}
		all.admitted = append(all.admitted, res.admitted...)
		all.refused = append(all.refused, res.refused...)
		all.unknown = append(all.unknown, res.unknown...)
	}
	if len(all.admitted) == 0 || len(all.refused) == 0 {
		t.Errorf("%d changes admitted and %d refused: the load should see both", len(all.admitted), len(all.refused))
	}

	// The stream of server 0 carries every event of the table, the
	// admissions of servers 1 and 2 among them, once each, in order.
	var table struct {
		Items []struct {
			ID   int64  `json:"id"`
			Kind string `json:"kind"`
		}
	}
	servers[1].get("/api/v1/events/log?after=0&limit=1000", &table)
	want := map[int64]bool{}
	for _, it := range table.Items {
		want[it.ID] = true
	}
	var last int64
	got := map[int64]bool{}
	for len(got) < len(want) {
		select {
		case id, ok := <-ids:
			if !ok {
				t.Fatal("the event stream ended")
			}
			if id <= last || !want[id] {
				t.Fatalf("the stream of server 0 sent %d after %d (the table has it: %v)", id, last, want[id])
			}
			last = id
			got[id] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("the stream of server 0 sent %d of the %d events the table holds", len(got), len(want))
		}
	}
	for _, s := range servers {
		if code := s.stop(syscall.SIGTERM); code != 0 {
			t.Fatalf("cairn serve exited %d:\n%s", code, s.out.String())
		}
	}
	checkOnce(t, dirs[1], all)
	doctorOf(t, dirs[2])

	// Back into SQLite: the same log.
	back := filepath.Join(t.TempDir(), "back")
	must(t, run(t, dirs[0], nil, "copy", "--to", back), "copy --to folder")
	if a, b := logOf(t, dirs[0]), logOf(t, back); !slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return string(x) == string(y) }) {
		t.Fatalf("cairn log differs after the copy back: %d commits in PostgreSQL, %d in SQLite", len(a), len(b))
	}
	db, dc := doctorOf(t, dirs[0]), doctorOf(t, back)
	for _, k := range []string{"commits", "nodes", "blobs", "purged"} {
		if db[k] != dc[k] {
			t.Errorf("doctor's %s: %v in PostgreSQL, %v in the copy back", k, db[k], dc[k])
		}
	}
	// A copy into a folder that is a vault is refused; a refused copy
	// leaves its folder as it was.
	r = run(t, dirs[0], nil, "copy", "--to", back)
	if r.code == 0 || !strings.Contains(r.stderr, "already inside the vault") {
		t.Errorf("copy into a vault's folder: exit %d\n%s", r.code, r.stderr)
	}
	if a, b := logOf(t, dirs[0]), logOf(t, back); len(a) != len(b) {
		t.Errorf("the refused copy changed the folder: %d commits, want %d", len(b), len(a))
	}
	// A copy into a database that has history is refused.
	r = run(t, back, []string{"XDG_CACHE_HOME=" + home}, "copy", "--to", url)
	if r.code == 0 || !strings.Contains(r.stderr, "history") {
		t.Errorf("copy into a database with history: exit %d\n%s", r.code, r.stderr)
	}
	// A vault with a source still queued is refused, and the folder the
	// copy was to make is not left behind.
	src := filepath.Join(t.TempDir(), "queued.md")
	os.WriteFile(src, []byte("# Queued\n\nNo worker runs this.\n"), 0o644)
	must(t, run(t, dirs[2], nil, "ingest", "--detach", src), "ingest --detach")
	again := filepath.Join(t.TempDir(), "again")
	r = run(t, dirs[2], nil, "copy", "--to", again)
	if r.code == 0 || !strings.Contains(r.stderr, "queued or running") {
		t.Errorf("copy with a source queued: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Lstat(again); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused copy left the folder it made, %s: %v", again, err)
	}
}

// TestPostgres_KillRescue runs agent jobs on three servers of one vault in
// PostgreSQL and kills (kill -9) the one running a job: another server
// hands the job back to the queue within 10 seconds, and every source
// ends merged, once.
func TestPostgres_KillRescue(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	const slow = `job=$(basename "$(dirname "$PWD")")
sleep 3
printf -- '---\ntitle: Mills '$job'\ntype: concept\n---\n# Mills\n\nSee [[concepts/paper|Paper]].\n' > concepts/mills-$job.md
sed -i 's|- \[\[concepts/ink|- [[concepts/mills-'$job'\|Mills]]\n- [[concepts/ink|' index.md
echo "Wrote a page on mills."`
	_, orig, sources := ingestVault(t, slow)
	url := pgtest.URL(t)
	must(t, run(t, orig, []string{"XDG_CACHE_HOME=" + t.TempDir()}, "copy", "--to", url), "copy --to postgres")
	dirs := places(t, url, 3)
	byPID := map[int]*serveProc{}
	for _, d := range dirs {
		s := startServe(t, d)
		byPID[s.cmd.Process.Pid] = s
	}
	must(t, run(t, dirs[0], nil, append([]string{"ingest", "--detach"}, sources...)...), "ingest --detach")
	var victim *serveProc
	deadline := time.Now().Add(time.Minute)
	for victim == nil {
		if time.Now().After(deadline) {
			t.Fatal("no job ran within a minute")
		}
		for _, j := range jobsOf(t, dirs[1]) {
			if j.State == "running" {
				parts := strings.Split(j.Worker, ":")
				if len(parts) == 3 {
					pid, _ := strconv.Atoi(parts[1])
					victim = byPID[pid]
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := victim.stop(syscall.SIGKILL); code != -1 {
		t.Fatalf("cairn serve after kill -9 exited %d", code)
	}
	dead := strconv.Itoa(victim.cmd.Process.Pid)
	killed := time.Now()
	other := dirs[0]
	if victim.vault == other {
		other = dirs[1]
	}
	for rescued := false; !rescued; time.Sleep(100 * time.Millisecond) {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("the dead server's job was not handed back within 10s: %+v", jobsOf(t, other))
		}
		rescued = true
		for _, j := range jobsOf(t, other) {
			if j.State == "running" && strings.Contains(j.Worker, ":"+dead+":") {
				rescued = false
			}
		}
	}
	t.Logf("rescued %v after the kill", time.Since(killed))
	deadline = time.Now().Add(2 * time.Minute)
	for pending := true; pending; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sources unfinished two minutes after the kill: %+v", sourcesOf(t, other))
		}
		pending = false
		for _, src := range sourcesOf(t, other) {
			pending = pending || src.Status == "queued" || src.Status == "running"
		}
	}
	srcs := sourcesOf(t, other)
	if len(srcs) != len(sources) {
		t.Fatalf("%d source records for %d sources", len(srcs), len(sources))
	}
	for _, s := range srcs {
		if s.Status != "merged" {
			t.Errorf("%s is %s (%s), want merged", s.Name, s.Status, s.Error)
		}
	}
	for _, j := range jobsOf(t, other) {
		if j.State != "completed" {
			t.Errorf("job %d is %s, want completed", j.ID, j.State)
		}
	}
	r := run(t, other, nil, "review", "list", "--status", "all", "--json")
	must(t, r, "review list")
	var props struct {
		Items []struct {
			Status string `json:"status"`
			Source string `json:"source"`
		}
	}
	json.Unmarshal([]byte(r.stdout), &props)
	admitted := map[string]int{}
	for _, p := range props.Items {
		if p.Status == "admitted" || p.Status == "accepted" {
			admitted[p.Source]++
		}
	}
	for _, s := range srcs {
		if admitted[s.ID] != 1 {
			t.Errorf("%s has %d admitted proposals, want 1", s.Name, admitted[s.ID])
		}
	}
	doctorOf(t, other)
}

type jobRow struct {
	ID     int64  `json:"id"`
	State  string `json:"state"`
	Worker string `json:"worker"`
}

func jobsOf(t *testing.T, dir string) []jobRow {
	t.Helper()
	r := run(t, dir, nil, "jobs", "--json")
	must(t, r, "jobs")
	var out struct{ Items []jobRow }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("jobs --json: %v\n%s", err, r.stdout)
	}
	return out.Items
}

// TestPostgres_ConnectionsLost cuts every connection of a server to the
// database (pg_terminate_backend) again and again while clients read and
// send changesets: every answer is a success, a conflict or a 503 (never
// another 5xx, never a hang), the server keeps serving once the
// connections come back, every change reported admitted is in main once,
// every refused one absent, and doctor is clean.
func TestPostgres_ConnectionsLost(t *testing.T) {
	if testing.Short() {
		t.Skip("a load of a few seconds")
	}
	name := "cairn-lost-" + strconv.Itoa(os.Getpid())
	url := pgtest.URL(t) + "&application_name=" + name
	orig, pages, words := loadVault(t, 100)
	must(t, run(t, orig, []string{"XDG_CACHE_HOME=" + t.TempDir()}, "copy", "--to", url), "copy --to postgres")
	dir := places(t, url, 1)[0]
	s := startServe(t, dir)
	admin, err := pgx.Connect(t.Context(), pgtest.Base(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(t.Context())
	cuts := 0
	res := runLoad(t, s.file, loadConfig{clients: 8, duration: 6 * time.Second, pages: pages, words: words, writeEvery: 3,
		kill: func() {
			for range 5 {
				var n int
				if err := admin.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n); err != nil {
					t.Errorf("terminate the server's connections: %v", err)
				}
				cuts += n
				time.Sleep(300 * time.Millisecond)
			}
		}})
	t.Logf("%d connections cut; %d reads, %d admitted, %d refused, %d unknown; statuses %v", cuts, len(res.reads), len(res.admitted), len(res.refused), len(res.unknown), res.status)
	if cuts == 0 {
		t.Fatal("no connection was cut")
	}
	for code, n := range res.status {
		if code >= 500 && code != 503 {
			t.Errorf("%d answers were %d", n, code)
		}
	}
	if res.transportErrors != 0 {
		t.Errorf("%d requests got no answer", res.transportErrors)
	}
	// Serving again: a read and a change.
	var info map[string]any
	if code := s.get("/api/v1/branch?name=main", &info); code != 200 {
		t.Errorf("after the cuts, GET /api/v1/branch = %d", code)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("cairn serve exited %d:\n%s", code, s.out.String())
	}
	// A change that got a 503 may have landed (the cut came after the
	// commit) or not, never twice: count them with the unknown ones.
	checkOnce(t, dir, res)
	doctorOf(t, dir)
}

// BenchmarkPostgresServeLoad serves one vault in PostgreSQL from three
// cairn serve processes, 32 clients each, for 60 s (reads, changesets
// against their bases, uploads of sources that the servers' workers
// integrate), then the same 96 clients against one process: every change
// reported admitted is in main once, every source ends once, no 5xx. It
// reports each side's throughput; their ratio is the scaling.
// CAIRN_BENCH_PAGES sets the vault's size (default 10,000).
func BenchmarkPostgresServeLoad(b *testing.B) {
	pages := 10_000
	if n, err := strconv.Atoi(os.Getenv("CAIRN_BENCH_PAGES")); err == nil && n > 0 {
		pages = n
	}
	for _, servers := range []int{3, 1} {
		b.Run(fmt.Sprintf("pages=%d/servers=%d", pages, servers), func(b *testing.B) {
			url := pgtest.URL(b)
			orig, paths, words := loadVault(b, pages)
			if r := runTB(b, orig, "copy", "--to", url); r.code != 0 {
				b.Fatalf("copy: %s", r.stderr)
			}
			var procs []*serveProc
			for i := range servers {
				dir := filepath.Join(b.TempDir(), "place-"+strconv.Itoa(i))
				if r := runTB(b, b.TempDir(), "init", "--bare", "--database", url, dir); r.code != 0 {
					b.Fatalf("init: %s", r.stderr)
				}
				procs = append(procs, startServe(b, dir))
			}
			clients := 96 / servers
			results := make([]*loadResult, servers)
			for range b.N {
				var wg sync.WaitGroup
				for i, s := range procs {
					wg.Go(func() {
						results[i] = runLoad(b, s.file, loadConfig{clients: clients, duration: 60 * time.Second, pages: paths, words: words,
							writeEvery: 10, ingestEvery: 50, prefix: strconv.Itoa(i)})
					})
				}
				wg.Wait()
			}
			b.StopTimer()
			all := &loadResult{status: map[int]int{}}
			secs := 0.0
			for _, res := range results {
				all.reads = append(all.reads, res.reads...)
				all.admitted = append(all.admitted, res.admitted...)
				all.refused = append(all.refused, res.refused...)
				all.unknown = append(all.unknown, res.unknown...)
				all.queued += res.queued
				all.transportErrors += res.transportErrors
				for code, n := range res.status {
					all.status[code] += n
				}
				secs = max(secs, res.took.Seconds())
			}
			// The jobs end, each once, on the servers' workers.
			deadline := time.Now().Add(10 * time.Minute)
			var srcs []sourceRow
			for pending := true; pending; time.Sleep(time.Second) {
				if time.Now().After(deadline) {
					b.Fatalf("sources unfinished ten minutes after the load")
				}
				r := runTB(b, procs[0].vault, "sources", "--json")
				var out struct{ Items []sourceRow }
				json.Unmarshal([]byte(r.stdout), &out)
				srcs, pending = out.Items, false
				for _, src := range srcs {
					pending = pending || src.Status == "queued" || src.Status == "running"
				}
			}
			if len(srcs) != all.queued {
				b.Errorf("%d sources recorded, %d queued", len(srcs), all.queued)
			}
			for _, src := range srcs {
				if src.Status != "merged" {
					b.Errorf("source %s ended %s: %s", src.Name, src.Status, src.Error)
				}
			}
			for _, s := range procs {
				s.stop(syscall.SIGTERM)
			}
			if n := all.serverErrors(); n != 0 || all.transportErrors != 0 || len(all.unknown) != 0 {
				b.Errorf("%d answers were 5xx, %d got no answer, %d changes no clear outcome: %v", n, all.transportErrors, len(all.unknown), all.status)
			}
			checkOnce(b, procs[0].vault, all)
			b.ReportMetric(percentile(all.reads, 0.50), "read-p50-ms")
			b.ReportMetric(percentile(all.reads, 0.99), "read-p99-ms")
			b.ReportMetric(float64(len(all.reads))/secs, "reads/s")
			b.ReportMetric(float64(len(all.admitted))/secs, "admitted/s")
			b.ReportMetric(float64(len(all.refused))/secs, "refused/s")
			b.ReportMetric(float64(all.queued)/secs, "sources/s")
			b.ReportMetric(float64(all.serverErrors()), "5xx")
		})
	}
}

// TestPostgres_ImportRace races three cairn import processes, each from a
// folder of its own machine, into a new vault in PostgreSQL, round after
// round, while a fourth process searches. The first import to take the
// vault's write lock makes its first build, with the full text on a
// second connection swapped in for fts; the others wait their turn and
// add to that index. Every import lands, with all its pages searchable;
// a search beside the race fails only by saying the index is being built
// (a build this small seldom outlasts a search's start); fts and the
// tables around it end as a vault's migrations made them, with no table
// a build left; and a deep doctor (which rebuilds the index and compares
// every row) is clean.
func TestPostgres_ImportRace(t *testing.T) {
	if testing.Short() {
		t.Skip("races processes")
	}
	// pages is search's most results: a search of an importer's word
	// finds all its pages.
	const importers, rounds, pages = 3, 4, 100
	root := t.TempDir()
	for i := range importers {
		files := map[string]string{}
		for j := range pages {
			files[fmt.Sprintf("p%03d.md", j)] = fmt.Sprintf("---\ntitle: Page %d %d\ntype: note\n---\nWritten by importer%d, common to all. [[p%03d]]\n", i, j, i, (j+1)%pages)
		}
		writeFiles(t, filepath.Join(root, "in-"+strconv.Itoa(i)), files)
	}
	want := indexesOf(t, pgtest.URL(t), root)
	swapped := 0
	for round := range rounds {
		url := pgtest.URL(t)
		first := filepath.Join(t.TempDir(), "vault")
		must(t, run(t, root, nil, "init", "--bare", "--database", url, first), "init --bare --database")
		dirs := append([]string{first}, places(t, url, importers-1)...)
		before := ftsOID(t, url)
		done := make(chan struct{})
		var searches, building int
		var reader sync.WaitGroup
		reader.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				r := run(t, dirs[0], nil, "search", "--json", "common")
				switch {
				case r.code == 0:
					searches++
				case strings.Contains(r.stderr, "being built"):
					building++
				default:
					t.Errorf("round %d: a search during the imports: exit %d\n%s", round, r.code, r.stderr)
					return
				}
			}
		})
		var wg sync.WaitGroup
		for i, dir := range dirs {
			wg.Go(func() {
				r := run(t, dir, nil, "import", "--prefix", "in"+strconv.Itoa(i), filepath.Join(root, "in-"+strconv.Itoa(i)))
				if r.code != 0 {
					t.Errorf("round %d: import %d: exit %d\n%s%s", round, i, r.code, r.stdout, r.stderr)
				}
			})
		}
		wg.Wait()
		close(done)
		reader.Wait()
		t.Logf("round %d: %d searches answered, %d found the index being built", round, searches, building)
		// A first build that finds a reader on the tables keeps their
		// indexes, and fts: the swap is not there every round.
		if ftsOID(t, url) != before {
			swapped++
		}
		for i := range importers {
			r := run(t, dirs[1], nil, "search", "--json", "--limit", "100", "importer"+strconv.Itoa(i))
			must(t, r, "search")
			var out struct{ Items []struct{ Path string } }
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("search --json: %v\n%s", err, r.stdout)
			}
			if len(out.Items) != pages {
				t.Errorf("round %d: a search of importer%d found %d pages, want %d", round, i, len(out.Items), pages)
			}
			for _, it := range out.Items {
				if !strings.HasPrefix(it.Path, "in"+strconv.Itoa(i)+"/") {
					t.Errorf("round %d: a search of importer%d found %s", round, i, it.Path)
				}
			}
		}
		if got := indexesOf(t, url, root); !slices.Equal(got, want) {
			t.Errorf("round %d: the index's tables after the race:\n%s\nwant, as a new vault has them:\n%s", round, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if blobs, _ := doctorOf(t, dirs[2])["blobs"].(float64); blobs < importers*pages {
			t.Errorf("round %d: doctor checked %v blobs, want at least the %d imported", round, blobs, importers*pages)
		}
	}
	t.Logf("%d of %d first builds swapped the full text in", swapped, rounds)
	if swapped == 0 {
		t.Error("no first build swapped its full text in for fts: the race never took that path")
	}
}

// ftsOID returns the oid of the table fts of the vault in the database
// url (whose search_path names its schema).
func ftsOID(t *testing.T, url string) uint32 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect to read the oid of fts: %v", err)
	}
	defer conn.Close(t.Context())
	var oid uint32
	if err := conn.QueryRow(t.Context(), `SELECT 'fts'::regclass::oid`).Scan(&oid); err != nil {
		t.Fatalf("the oid of fts: %v", err)
	}
	return oid
}

// indexesOf returns, for the vault in the database url, the tables of its
// schema and every index on them, without the schema's name, sorted: a
// new vault (made in a place under root) when the schema has none yet.
func indexesOf(t *testing.T, url, root string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect to read the vault's indexes: %v", err)
	}
	defer conn.Close(t.Context())
	var schema string
	if err := conn.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil || schema == "" {
		must(t, run(t, root, nil, "init", "--bare", "--database", url, filepath.Join(root, "reference")), "init --bare --database")
		if err := conn.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil {
			t.Fatalf("the vault's schema: %v", err)
		}
	}
	rows, err := conn.Query(t.Context(), `SELECT 'table ' || tablename FROM pg_tables WHERE schemaname = $1
		UNION ALL SELECT replace(indexdef, quote_ident($1) || '.', '') FROM pg_indexes WHERE schemaname = $1`, schema)
	if err != nil {
		t.Fatalf("the vault's tables and indexes: %v", err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("the vault's tables and indexes: %v", err)
	}
	slices.Sort(defs)
	return defs
}
