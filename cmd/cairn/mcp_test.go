package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cairn"
	"cairn/app"
	"cairn/markdown"
)

// sampleVault makes a vault of the bundled research brain in a new
// folder and returns its path.
func sampleVault(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "brain")
	if err := os.CopyFS(dir, os.DirFS("sample/vault")); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, dir, nil, "init", "."))
	return dir
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// httpSession connects a go-sdk client to the server's /mcp with token.
func httpSession(t testing.TB, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "session-test", Version: "1"}, nil).Connect(ctx, tr, nil)
}

// stdioSession starts cairn mcp in vault with args and connects to it.
func stdioSession(tb testing.TB, vault string, args ...string) *mcp.ClientSession {
	tb.Helper()
	cmd := exec.Command(cairnBin(tb), append([]string{"mcp", "-C", vault}, args...)...)
	cmd.Env = append(os.Environ(), "CAIRN_USER=tester")
	return commandSession(tb, cmd, "session-test")
}

// tool calls a tool and decodes its structured result.
func tool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	data, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(data, &out)
	return out, res.IsError
}

// agentSession is the session an agent has with the vault: it searches,
// reads, writes with a stale hash (a conflict), writes with the right one
// (admitted), deletes a page (held for review), and cannot decide on its
// own held change; a session with the review scope can. It returns the
// held review's id.
func agentSession(t *testing.T, agent, reviewer *mcp.ClientSession) {
	t.Helper()
	out, _ := tool(t, agent, "search", map[string]any{"query": "movable type"})
	ms, _ := out["matches"].([]any)
	if len(ms) == 0 {
		t.Fatalf("search found nothing: %v", out)
	}
	page, isErr := tool(t, agent, "read_page", map[string]any{"id": "Paper"})
	if isErr || page["hash"] == "" {
		t.Fatalf("read_page: %v", page)
	}
	stale, isErr := tool(t, agent, "write_page", map[string]any{"path": "concepts/paper.md", "content": "# Paper\n", "expected_hash": strings.Repeat("ab", 32)})
	conflict, _ := stale["conflict"].(map[string]any)
	if !isErr || stale["status"] != "conflict" || conflict["current"] != page["hash"] {
		t.Fatalf("a stale write = %v, want a conflict carrying the current hash %v", stale, page["hash"])
	}
	f, isErr := tool(t, agent, "read_page", map[string]any{"id": "concepts/paper.md"})
	if isErr {
		t.Fatal(f)
	}
	raw, _ := os.ReadFile(filepath.Join("sample", "vault", "concepts", "paper.md"))
	ok, isErr := tool(t, agent, "write_page", map[string]any{"path": "concepts/paper.md", "content": string(raw) + "\nRag paper came to Europe through Spain.\n", "expected_hash": page["hash"]})
	if isErr || ok["status"] != "admitted" || ok["commit"] == "" {
		t.Fatalf("a write with the right hash = %v, want admitted", ok)
	}
	if again, _ := tool(t, agent, "search", map[string]any{"query": "Spain"}); !strings.Contains(jsonText(again), "concepts/paper.md") {
		t.Errorf("the admitted text is not found by search at once: %v", again)
	}
	fresh, _ := tool(t, agent, "read_page", map[string]any{"id": "entities/william-caxton"})
	del, _ := tool(t, agent, "delete_page", map[string]any{"path": "entities/william-caxton.md", "expected_hash": fresh["hash"]})
	id, _ := del["review"].(float64)
	if del["status"] != "held" || id == 0 {
		t.Fatalf("a deletion = %v, want held with a review id", del)
	}
	if _, err := agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "review_decide", Arguments: map[string]any{"id": id, "decision": "accept"}}); err == nil {
		t.Errorf("an agent without the review scope decided on a review")
	}
	dec, isErr := tool(t, reviewer, "review_decide", map[string]any{"id": id, "decision": "reject", "reason": "keep Caxton"})
	p, _ := dec["proposal"].(map[string]any)
	if isErr || p["status"] != "rejected" {
		t.Fatalf("review_decide with the review scope = %v", dec)
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestMCP_Stdio: an agent's whole session with cairn mcp as a child
// process, over its standard input and output.
func TestMCP_Stdio(t *testing.T) {
	vault := sampleVault(t)
	agent := stdioSession(t, vault)
	reviewer := stdioSession(t, vault, "--as", "user:reviewer", "--scope", "read,review")
	agentSession(t, agent, reviewer)
	h, _ := tool(t, agent, "health", nil)
	if h["principal"] != "agent:session-test" {
		t.Errorf("principal over stdio = %v, want agent:session-test", h["principal"])
	}
	log := run(t, vault, nil, "log", "-n", "3")
	if !strings.Contains(log.stdout, "agent:session-test") {
		t.Errorf("the admitted write is not recorded as the agent's:\n%s", log.stdout)
	}
}

// TestMCP_HTTP: the same session against cairn serve's /mcp, with tokens;
// and what an HTTP client without the right token gets.
func TestMCP_HTTP(t *testing.T) {
	vault := sampleVault(t)
	srv := startServe(t, vault)
	agentTok := strings.TrimSpace(run(t, vault, nil, "token", "create", "--name", "agent", "--principal", "agent:claude", "--scope", "read,propose").stdout)
	agentTok = secretOf(t, agentTok)
	revTok := secretOf(t, run(t, vault, nil, "token", "create", "--name", "rev", "--scope", "read,review").stdout)
	agent, err := httpSession(t, srv.file.URL, agentTok)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	reviewer, err := httpSession(t, srv.file.URL, revTok)
	if err != nil {
		t.Fatal(err)
	}
	defer reviewer.Close()
	agentSession(t, agent, reviewer)

	post := func(token, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.file.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	resp, _ := post("", list)
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`) {
		t.Errorf("no token: %d %q, want 401 naming the resource metadata", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// A call is answered as an event stream (what a tool reports while it
	// runs travels before its result), and a list that depends on the
	// token may be cached by its client only.
	if resp, body := post(agentTok, list); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(body, `"cacheScope":"private"`) || strings.Contains(body, `"cacheScope":"public"`) {
		t.Errorf("tools/list: %d %q %.300s, want 200, an event stream, cacheScope private", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, _ := post("cairn_nope_"+strings.Repeat("x", 43), list); resp.StatusCode != 401 {
		t.Errorf("an unknown token: %d, want 401", resp.StatusCode)
	}
	if resp, body := post(agentTok, "{not json"); resp.StatusCode != 400 {
		t.Errorf("malformed JSON-RPC: %d %s, want 400", resp.StatusCode, body)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_page","arguments":{"path":"big.md","content":"` + strings.Repeat("x", 9<<20) + `"}}}`
	if resp, _ := post(agentTok, big); resp.StatusCode != 413 && resp.StatusCode != 400 {
		t.Errorf("a 9 MiB request: %d, want 413", resp.StatusCode)
	}
	var meta map[string]any
	mr, err := http.Get(srv.file.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(mr.Body).Decode(&meta)
	mr.Body.Close()
	if meta["resource"] != srv.file.URL+"/mcp" {
		t.Errorf("protected-resource metadata = %v", meta)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.file.URL+"/mcp", strings.NewReader(list))
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+agentTok)
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 421 {
		t.Errorf("a request for another host (DNS rebinding) = %v %v, want 421", r.StatusCode, err)
	}
	// The calls that ask for a change are audited, each under the tool it
	// called, and the refusals; reads are not. Rows are written moments
	// after the answers (the server's auditor groups them).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		routes := map[string]int{}
		for _, r := range srv.auditRows() {
			switch {
			case r.Route == "POST /mcp" && r.Status < 400:
				t.Fatalf("an MCP request that changed nothing was audited: %+v", r)
			case strings.HasPrefix(r.Route, "POST /mcp"):
				routes[r.Route]++
			}
		}
		if routes["POST /mcp write_page"] == 2 && routes["POST /mcp delete_page"] == 1 && routes["POST /mcp review_decide"] == 1 && routes["POST /mcp"] >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("MCP audit rows by route = %v, want write_page 2, delete_page 1, review_decide 1 and the refusals", routes)
		}
	}
	if _, err := os.Stat(filepath.Join(vault, "big.md")); err == nil {
		t.Errorf("an oversize request wrote its file")
	}
}

// secretOf is the secret cairn token create printed.
func secretOf(t *testing.T, out string) string {
	t.Helper()
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "cairn_") {
			return f
		}
	}
	t.Fatalf("no secret in %q", out)
	return ""
}

// mcpLoad is a load of MCP clients that read pages and append lines of
// their own to them with write_page and the hash each read.
type mcpLoad struct {
	pages []string
	// heads are the pages' frontmatter blocks: read_page gives the body,
	// a writer puts the page back together (the load changes bodies only).
	heads map[string]string
	// Each client writes rounds times, or for duration when it is set.
	rounds   int
	duration time.Duration
	// reads is how many reads (read_page of a page, or every third a
	// search of queries) a client makes between two writes.
	reads   int
	queries []string
	// readPages are the pages reads read; default pages.
	readPages []string
	// slots makes each client rewrite its own line ("slot N: …") instead
	// of appending one.
	slots bool
}

// mcpLoadResult is what the clients were told: the lines admitted, the
// lines refused as conflicts, and the reads' latencies.
type mcpLoadResult struct {
	mu                sync.Mutex
	admitted, refused map[string]bool
	// read is the hash of the page each admitted line's writer read.
	read  map[string]string
	reads []time.Duration
	took  time.Duration
}

// runMCPLoad runs cfg with one client per session. A write that is
// neither admitted nor a conflict, or a read that fails, fails tb.
func runMCPLoad(tb testing.TB, sessions []*mcp.ClientSession, cfg mcpLoad) *mcpLoadResult {
	res := &mcpLoadResult{admitted: map[string]bool{}, refused: map[string]bool{}, read: map[string]string{}}
	readPages := cfg.readPages
	if len(readPages) == 0 {
		readPages = cfg.pages
	}
	var wg sync.WaitGroup
	start := time.Now()
	callTool := func(cs *mcp.ClientSession, name string, args map[string]any, out any) (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return false, err
		}
		data, _ := json.Marshal(r.StructuredContent)
		json.Unmarshal(data, out)
		return r.IsError, nil
	}
	for w, cs := range sessions {
		wg.Go(func() {
			var reads []time.Duration
			defer func() {
				res.mu.Lock()
				res.reads = append(res.reads, reads...)
				res.mu.Unlock()
			}()
			for r := 0; ; r++ {
				if cfg.duration > 0 && time.Since(start) > cfg.duration || cfg.duration == 0 && r >= cfg.rounds {
					return
				}
				for i := range cfg.reads {
					t0 := time.Now()
					var out map[string]any
					var isErr bool
					var err error
					if i%3 == 2 && len(cfg.queries) > 0 {
						isErr, err = callTool(cs, "search", map[string]any{"query": cfg.queries[(w*7+r*3+i)%len(cfg.queries)]}, &out)
					} else {
						isErr, err = callTool(cs, "read_page", map[string]any{"id": readPages[(w*13+r*5+i)%len(readPages)]}, &out)
					}
					if err != nil || isErr {
						tb.Errorf("client %d: a read: %v %v", w, err, out)
						return
					}
					reads = append(reads, time.Since(t0))
				}
				page := cfg.pages[(w+r)%len(cfg.pages)]
				var p struct{ Path, Hash, Body string }
				if isErr, err := callTool(cs, "read_page", map[string]any{"id": page}, &p); err != nil || isErr {
					tb.Errorf("client %d: read %s: %v", w, page, err)
					return
				}
				line := fmt.Sprintf("client %d round %d", w, r)
				if cfg.slots {
					line = "slots: " + line
				}
				content := cfg.heads[p.Path] + p.Body + line + "\n"
				if cfg.slots {
					// Each client rewrites a line of its own: changes of
					// others merge cleanly, so only the check of the hash
					// read refuses a stale write.
					slot := regexp.MustCompile(fmt.Sprintf(`(?m)^slot %d:.*$`, w))
					content = cfg.heads[p.Path] + slot.ReplaceAllString(p.Body, fmt.Sprintf("slot %d: %s", w, line))
				}
				var o struct{ Status string }
				if _, err := callTool(cs, "write_page", map[string]any{"path": p.Path, "content": content, "expected_hash": p.Hash, "message": line}, &o); err != nil {
					tb.Errorf("client %d: write: %v", w, err)
					return
				}
				res.mu.Lock()
				switch o.Status {
				case "admitted":
					res.admitted[line] = true
					res.read[line] = p.Hash
				case "conflict":
					res.refused[line] = true
				default:
					tb.Errorf("client %d: write_page = %+v, want admitted or conflict", w, o)
				}
				res.mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.took = time.Since(start)
	return res
}

// headsOf reads the frontmatter block of each page from the vault's folder.
func headsOf(tb testing.TB, vault string, pages []string) map[string]string {
	heads := map[string]string{}
	for _, p := range pages {
		data, err := os.ReadFile(filepath.Join(vault, filepath.FromSlash(p)))
		if err != nil {
			tb.Fatal(err)
		}
		parts := markdown.Split(data)
		heads[p] = string(parts.Head) + string(parts.YAML) + string(parts.Tail)
	}
	return heads
}

// checkLines fails unless every admitted line is in the pages exactly
// once, and no refused one is.
func checkLines(t testing.TB, vault string, pages []string, admitted, refused map[string]bool) {
	t.Helper()
	var all string
	for _, p := range pages {
		r := runTB(t, vault, "show", "main:"+p)
		all += r.stdout
	}
	for line := range admitted {
		if n := strings.Count(all, line+"\n"); n != 1 {
			t.Errorf("%q was admitted and is in main %d times (lost or doubled)", line, n)
		}
	}
	for line := range refused {
		if strings.Contains(all, line+"\n") {
			t.Errorf("%q was refused as a conflict, yet is in main", line)
		}
	}
}

// checkRead fails unless each admitted line's commit on main (its
// first-parent line: the commit that admitted it, merged onto main or
// not) changed its page from the version the writer read: the page in the
// commit's first parent has the hash the writer sent. A write merged onto
// a change it did not see would break it.
func checkRead(tb testing.TB, vault string, pages []string, read map[string]string) {
	tb.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, vault, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer a.Close()
	seen := 0
	for _, p := range pages {
		cs, err := a.Log(ctx, "main", app.LogOptions{Path: p, FirstParent: true})
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range cs {
			want, ok := read[c.Message]
			if !ok {
				continue
			}
			seen++
			before, err := a.ReadFile(ctx, c.Parents[0].String(), p)
			if err != nil || before.Entry.Blob.String() != want {
				got := ""
				if before != nil {
					got = before.Entry.Blob.Short()
				}
				tb.Errorf("%q (commit %s, %d parents, by %s) landed on %s of %s, its writer read %.12s (%v)", c.Message, c.Hash.Short(), len(c.Parents), c.Principal, got, p, want, err)
			}
		}
	}
	if seen != len(read) {
		tb.Errorf("%d admitted writes found in the history of the pages, %d were admitted", seen, len(read))
	}
}

// TestMCP_RaceWriters: four cairn mcp processes append to two pages at
// once, each with the hash it read, 25 times each: every write is
// admitted or a conflict, no admitted line is lost or doubled, no refused
// one lands.
func TestMCP_RaceWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	pages := []string{"notes/a.md", "notes/b.md"}
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	home := "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[notes/a]]\n- [[notes/b]]\n"
	os.WriteFile(filepath.Join(dir, "index.md"), []byte(home), 0o644)
	for _, p := range pages {
		head := "---\ntitle: " + strings.TrimSuffix(filepath.Base(p), ".md") + "\ntype: concept\n---\n"
		os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), []byte(head+"# Lines\n\n[[index]]\n\n"), 0o644)
	}
	must(t, run(t, dir, nil, "init", "."))
	var sessions []*mcp.ClientSession
	for range 4 {
		sessions = append(sessions, stdioSession(t, dir))
	}
	res := runMCPLoad(t, sessions, mcpLoad{pages: pages, heads: headsOf(t, dir, pages), rounds: 25})
	if len(res.admitted) == 0 || len(res.refused) == 0 {
		t.Errorf("%d admitted, %d conflicts: the race should see both", len(res.admitted), len(res.refused))
	}
	t.Logf("%d admitted, %d conflicts", len(res.admitted), len(res.refused))
	checkLines(t, dir, pages, res.admitted, res.refused)
	checkRead(t, dir, pages, res.read)

	// Each client rewrites a line of its own: every stale write must be a
	// conflict even though it would merge.
	slots := make([]string, 4)
	for w := range slots {
		slots[w] = fmt.Sprintf("slot %d: -\n\nkeep %d\n", w, w)
	}
	body := "# Slots\n\n[[index]]\n\n" + strings.Join(slots, "\n")
	var edits []app.FileEdit
	for _, p := range pages {
		edits = append(edits, app.FileEdit{Path: p, Content: []byte(headsOf(t, dir, []string{p})[p] + body)})
	}
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("tester"))
	a, err := app.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := a.ResolveCommit(ctx, "main")
	if _, err := a.CommitChanges(ctx, app.ChangesRequest{Base: head.Hash, Changes: edits, Message: "slots"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	res = runMCPLoad(t, sessions, mcpLoad{pages: pages, heads: headsOf(t, dir, pages), rounds: 25, slots: true})
	t.Logf("slots: %d admitted, %d conflicts", len(res.admitted), len(res.refused))
	if len(res.refused) == 0 {
		t.Errorf("no write was stale: the race should see conflicts")
	}
	checkRead(t, dir, pages, res.read)
}
