package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/auth"
	"cairn/mcpserver"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata")

// fixture makes a vault of the bundled research brain (the demo's) and
// returns it open.
func fixture(t testing.TB) *app.App {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(dir, os.DirFS("../cmd/cairn/sample/vault")); err != nil {
		t.Fatal(err)
	}
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("tester"))
	a, err := app.Init(ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Adopt(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// connect returns a client session of s for a caller with scopes, over
// in-memory transports.
func connect(t testing.TB, s *mcpserver.Server, caller *mcpserver.Caller) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP(caller).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// step is one call of the golden session. Its arguments may name the
// hash a file has in main now: {{hash PATH}}.
type step struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"arguments"`
}

// transcript is one tool's calls and results, normalised.
type transcript struct {
	Tool  string  `json:"tool"`
	Calls []entry `json:"calls"`
}

type entry struct {
	Arguments map[string]any `json:"arguments"`
	IsError   bool           `json:"isError,omitempty"`
	Result    any            `json:"result"`
}

var session = []step{
	{"search", map[string]any{"query": "ink"}},
	{"search", map[string]any{"query": "printing", "type": "concept", "limit": 2}},
	{"search", map[string]any{"query": "ink", "cursor": "not-a-cursor"}},
	{"read_page", map[string]any{"id": "concepts/paper"}},
	{"read_page", map[string]any{"id": "Printing ink"}},
	{"read_page", map[string]any{"id": "no such page"}},
	{"neighbors", map[string]any{"id": "concepts/paper"}},
	{"shortest_path", map[string]any{"from": "concepts/paper", "to": "entities/martin-luther"}},
	{"list_pages", map[string]any{"type": "concept", "limit": 2}},
	{"list_pages", map[string]any{"field": "tags", "value": "printing"}},
	{"list_pages", map[string]any{"type": "concept", "where": []any{"tags ~ print", "title >= P"}}},
	{"list_pages", map[string]any{"where": []any{"title >="}}},
	{"inspect", map[string]any{"page": "concepts/paper"}},
	{"links", map[string]any{"page": "concepts/paper"}},
	{"backlinks", map[string]any{"page": "concepts/paper"}},
	{"ask", map[string]any{"question": "Where was oil-based ink first used for printing?"}},
	{"ask", map[string]any{"question": ""}},
	{"run_tool", map[string]any{"tool": "flashcards", "count": 6, "focus": "paper"}},
	{"run_tool", map[string]any{"tool": "evidence-map", "scope": []any{"concepts/paper"}}},
	{"run_tool", map[string]any{"tool": "decision-brief"}},
	{"run_tool", map[string]any{"tool": "flashcards", "count": 40}},
	{"run_tool", map[string]any{"tool": "horoscope"}},
	{"lint", map[string]any{}},
	{"lint", map[string]any{"min": "loud"}},
	{"log", map[string]any{"limit": 1}},
	{"list_branches", map[string]any{}},
	{"list_tags", map[string]any{}},
	{"topology", map[string]any{"top": 3}},
	{"list_sources", map[string]any{}},
	{"list_jobs", map[string]any{}},
	// Writes: a stale hash is a conflict; the right one is admitted.
	{"write_page", map[string]any{"path": "concepts/paper.md", "content": "# Paper\n\nGone.\n", "expected_hash": "0123456789ab0123456789ab"}},
	{"edit_page", map[string]any{"path": "concepts/paper.md", "expected_hash": "{{hash concepts/paper.md}}", "set_field": map[string]any{"field": "updated", "value": "2026-12-01"}}},
	{"edit_page", map[string]any{"path": "concepts/paper.md", "replace": map[string]any{"old": "no such text", "new": "x"}}},
	{"append_to_page", map[string]any{"path": "concepts/printing-ink.md", "content": "See also [[Paper]]."}},
	{"write_page", map[string]any{"path": "concepts/paper.md", "expected_hash": "{{hash concepts/paper.md}}",
		"content": "{{content concepts/paper.md}}\nRag paper came to Europe from the east.\n"}},
	{"write_page", map[string]any{"path": "raw/new-source.md", "content": "an agent may not add sources"}},
	{"write_page", map[string]any{"path": "log.md", "content": "# Log\n", "expected_hash": "{{hash log.md}}"}},
	{"write_page", map[string]any{"path": "../outside.md", "content": "x"}},
	{"delete_page", map[string]any{"path": "concepts/paper.md", "expected_hash": "{{hash concepts/paper.md}}"}},
	{"move_page", map[string]any{"from": "concepts/printing-ink.md", "to": "concepts/ink.md", "expected_hash": "{{hash concepts/printing-ink.md}}"}},
	{"propose", map[string]any{"message": "two notes", "hold": true, "files": []any{
		map[string]any{"path": "concepts/vellum.md", "content": "---\ntitle: Vellum\ntype: concept\n---\n# Vellum\n\nSee [[Paper]].\n"},
		map[string]any{"path": "concepts/parchment.md", "content": "---\ntitle: Parchment\ntype: concept\n---\n# Parchment\n\nSee [[Vellum]].\n"},
	}}},
	{"list_reviews", map[string]any{}},
	{"show_review", map[string]any{"id": "{{last held}}"}},
	{"review_decide", map[string]any{"id": "{{last held}}", "decision": "reject", "reason": "not now"}},
	{"review_decide", map[string]any{"id": "{{last held}}", "decision": "maybe"}},
	{"review_decide", map[string]any{"id": 1, "decision": "accept"}},
	{"ingest", map[string]any{"name": "letter.md", "content": "# A letter\n\nA letter about paper mills in Fabriano.\n"}},
	{"job_status", map[string]any{"id": 1}},
	{"diff", map[string]any{"from": "main~1", "to": "main"}},
	// An agent declares a type (admitted: no page breaks it), then reads
	// its schema; a page of the type that breaks it is held.
	{"write_page", map[string]any{"path": "types/mill.md", "content": "---\ntitle: Mill\nrequires: [place]\nfields:\n  place: link to place\n  founded: integer\n---\nA paper mill.\n"}},
	{"list_types", map[string]any{}},
	{"get_schema", map[string]any{"type": "mill"}},
	{"get_schema", map[string]any{"type": "factory"}},
	{"write_page", map[string]any{"path": "concepts/fabriano-mill.md", "content": "---\ntitle: Fabriano mill\ntype: mill\nfounded: around 1264\n---\nSee [[Paper]].\n"}},
	{"health", map[string]any{}},
}

var (
	hexHash = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	rfcTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	shortID = regexp.MustCompile(`\b[0-9a-f]{12}\b|\b[0-9a-f]{16}\b`)
)

// normalise replaces what differs from run to run (commit hashes, times)
// with placeholders; blob hashes of known content are kept by their
// first 12 digits only where they are stable, so all 64-digit hashes
// become <hash>.
func normalise(data []byte) any {
	s := hexHash.ReplaceAllString(string(data), "<hash>")
	s = rfcTime.ReplaceAllString(s, "<time>")
	s = shortID.ReplaceAllString(s, "<short>")
	var v any
	json.Unmarshal([]byte(s), &v)
	return v
}

// TestTools_Golden drives a whole session through every tool and compares
// each tool's calls and results with testdata/<tool>.json (go test
// -update rewrites them). Every result is checked against its tool's
// output schema, and every error result carries a code and a message.
func TestTools_Golden(t *testing.T) {
	a := fixture(t)
	s := mcpserver.New(a, &mcpserver.Options{Version: "test"})
	cs := connect(t, s, mcpserver.Stdio("", []auth.Scope{auth.Read, auth.Propose, auth.Review}))
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tl := range tools.Tools {
		data, _ := json.Marshal(tl.OutputSchema)
		var sc jsonschema.Schema
		if err := json.Unmarshal(data, &sc); err != nil {
			t.Fatalf("%s: output schema: %v", tl.Name, err)
		}
		r, err := sc.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tl.Name, err)
		}
		schemas[tl.Name] = r
		if tl.Annotations == nil || tl.Annotations.OpenWorldHint == nil || *tl.Annotations.OpenWorldHint || tl.Annotations.DestructiveHint == nil || tl.Title == "" {
			t.Errorf("%s: annotations %+v, title %q: want every hint explicit, openWorld false, and a title", tl.Name, tl.Annotations, tl.Title)
		}
	}
	byTool := map[string]*transcript{}
	var order []string
	pc := cairn.NewContextWithPrincipal(ctx, cairn.User("tester"))
	for _, st := range session {
		args := fill(t, pc, a, st.Args)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: protocol error %v", st.Tool, st.Args, err)
		}
		data, _ := json.Marshal(res.StructuredContent)
		if res.IsError {
			var e struct{ Code, Error, Status string }
			json.Unmarshal(data, &e)
			if (e.Code == "" || e.Error == "") && e.Status != "conflict" {
				t.Errorf("%s %v: error result %s without a code and a message", st.Tool, st.Args, data)
			}
		} else if r := schemas[st.Tool]; r != nil {
			var v any
			json.Unmarshal(data, &v)
			if err := r.Validate(v); err != nil {
				t.Errorf("%s: the result does not fit the tool's output schema: %v\n%s", st.Tool, err, data)
			}
		}
		if len(data) > 32<<10 {
			t.Errorf("%s: a result of %d bytes, over the 32 KiB budget", st.Tool, len(data))
		}
		tr := byTool[st.Tool]
		if tr == nil {
			tr = &transcript{Tool: st.Tool}
			byTool[st.Tool] = tr
			order = append(order, st.Tool)
		}
		tr.Calls = append(tr.Calls, entry{Arguments: st.Args, IsError: res.IsError, Result: normalise(data)})
	}
	for _, tl := range tools.Tools {
		if byTool[tl.Name] == nil {
			t.Errorf("the golden session never calls %s", tl.Name)
		}
	}
	for _, name := range order {
		golden(t, filepath.Join("testdata", name+".json"), byTool[name])
	}
}

// fill replaces placeholders in args: {{hash PATH}} with the hash PATH
// has in main, {{content PATH}} with its content, {{last held}} with the
// newest held review's id.
func fill(t testing.TB, ctx context.Context, a *app.App, args map[string]any) map[string]any {
	out := map[string]any{}
	read := func(path string) *app.FileAt {
		f, err := a.ReadFile(ctx, "main", path)
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		return f
	}
	for k, v := range args {
		s, _ := v.(string)
		switch {
		case strings.HasPrefix(s, "{{hash "):
			v = read(strings.TrimSuffix(strings.TrimPrefix(s, "{{hash "), "}}")).Entry.Blob.String()
		case strings.HasPrefix(s, "{{content "):
			path, rest, _ := strings.Cut(strings.TrimPrefix(s, "{{content "), "}}")
			v = read(path).Content + rest
		case s == "{{last held}}":
			ps, err := a.Proposals(ctx, admit.ProposalFilter{Status: "held", Limit: 1})
			if err != nil || len(ps) == 0 {
				t.Fatalf("no held review: %v", err)
			}
			v = ps[0].ID
		}
		out[k] = v
	}
	return out
}

// golden compares v with the file, or writes it with -update.
func golden(t *testing.T, file string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./mcpserver -update writes it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s differs from this run's transcript (go test ./mcpserver -run Golden -update rewrites it):\n%s", file, lineDiff(string(want), buf.String()))
	}
}

// lineDiff shows the first lines where a and b differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
