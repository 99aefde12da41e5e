package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cairn"
	"cairn/app"
	"cairn/auth"
	"cairn/mcpserver"
	"cairn/worktree"
)

// call calls a tool and returns its structured result decoded into a map,
// and whether it is an error result; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var out map[string]any
	data, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(data, &out)
	return out, res.IsError
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestScopes: a caller is listed only the tools its scopes allow, and a
// tool it is not listed is an unknown tool to it; review_decide needs
// review.
func TestScopes(t *testing.T) {
	a := fixture(t)
	s := mcpserver.New(a, nil)
	reader := connect(t, s, mcpserver.Stdio("agent:reader", []auth.Scope{auth.Read}))
	names := toolNames(t, reader)
	for _, w := range []string{"write_page", "edit_page", "append_to_page", "move_page", "delete_page", "propose", "ingest", "review_decide"} {
		if slices.Contains(names, w) {
			t.Errorf("a read-only caller is listed %s", w)
		}
	}
	if !slices.Contains(names, "search") || !slices.Contains(names, "read_page") {
		t.Errorf("a reader is not listed the read tools: %v", names)
	}
	if _, err := reader.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"path": "a.md", "content": "x"}}); err == nil {
		t.Errorf("a reader called write_page without a protocol error")
	}
	proposer := connect(t, s, mcpserver.Stdio("", []auth.Scope{auth.Read, auth.Propose}))
	names = toolNames(t, proposer)
	if slices.Contains(names, "review_decide") || !slices.Contains(names, "write_page") {
		t.Errorf("read,propose is listed %v; want the writes and not review_decide", names)
	}
	h, _ := call(t, proposer, "health", nil)
	if h["principal"] != "agent:test-client" {
		t.Errorf("over stdio without --as the principal is %v, want agent:test-client (the client's name)", h["principal"])
	}
	reviewer := connect(t, s, mcpserver.Stdio("user:rev", []auth.Scope{auth.Read, auth.Review}))
	if names := toolNames(t, reviewer); !slices.Contains(names, "review_decide") || slices.Contains(names, "write_page") {
		t.Errorf("read,review is listed %v", names)
	}
}

// TestBadInput: wrong argument types, unknown arguments, an unknown tool,
// paths outside the vault: each a specific error, nothing changed.
func TestBadInput(t *testing.T) {
	a := fixture(t)
	s := mcpserver.New(a, nil)
	cs := connect(t, s, mcpserver.Stdio("", []auth.Scope{auth.Read, auth.Propose, auth.Review}))
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("tester"))
	before, err := a.ResolveCommit(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args map[string]any
		code string
	}{
		{"search", map[string]any{"query": 7}, "invalid"},
		{"search", map[string]any{"query": "ink", "color": "red"}, "invalid"},
		{"search", map[string]any{}, "invalid"},
		{"search", map[string]any{"query": "ink", "limit": 5000}, "invalid"},
		{"read_page", map[string]any{"id": []any{"a"}}, "invalid"},
		{"read_page", map[string]any{"id": "concepts/paper", "offset": -1}, "invalid"},
		{"write_page", map[string]any{"path": "/etc/passwd", "content": "x"}, "invalid"},
		{"write_page", map[string]any{"path": "a/../../b.md", "content": "x"}, "invalid"},
		{"write_page", map[string]any{"path": "ok.md"}, "invalid"},
		{"edit_page", map[string]any{"path": "concepts/paper.md"}, "invalid"},
		{"edit_page", map[string]any{"path": "concepts/paper.md", "section": map[string]any{"heading": "No such heading", "content": "x"}}, "not_found"},
		{"delete_page", map[string]any{"path": "nothing-here.md", "expected_hash": "0123456789ab"}, ""},
		{"job_status", map[string]any{"id": 999}, "not_found"},
		{"show_review", map[string]any{"id": "one"}, "invalid"},
		{"list_pages", map[string]any{"cursor": "!!"}, "invalid"},
		{"log", map[string]any{"ref": "no-such-branch"}, "not_found"},
		{"diff", map[string]any{"from": "main", "to": "main~999"}, "not_found"},
	}
	for _, c := range cases {
		out, isErr := call(t, cs, c.tool, c.args)
		if !isErr {
			t.Errorf("%s %v: no error result: %v", c.tool, c.args, out)
			continue
		}
		if c.code == "" {
			if out["status"] != "conflict" {
				t.Errorf("%s %v = %v, want a conflict", c.tool, c.args, out)
			}
			continue
		}
		if out["code"] != c.code || out["error"] == "" {
			t.Errorf("%s %v = %v, want code %s with a message", c.tool, c.args, out, c.code)
		}
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("an unknown tool: %v, want a protocol error naming it", err)
	}
	after, err := a.ResolveCommit(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash != before.Hash {
		t.Errorf("bad input moved main from %s to %s", before.Hash.Short(), after.Hash.Short())
	}
}

// TestResourcesAndPrompt: pages are resources by URI template; the
// vault's AGENTS.md is the prompt "guide".
func TestResourcesAndPrompt(t *testing.T) {
	a := fixture(t)
	cs := connect(t, mcpserver.New(a, nil), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	ctx := context.Background()
	tpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpls.ResourceTemplates) != 1 || tpls.ResourceTemplates[0].URITemplate != "cairn://page/{+path}" {
		t.Fatalf("resource templates = %+v, %v", tpls, err)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "cairn://page/concepts/paper.md"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "title: Paper") {
		t.Fatalf("read cairn://page/concepts/paper.md = %+v, %v", res, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "cairn://page/../secret.md"}); err == nil {
		t.Errorf("a resource outside the vault was read")
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "cairn://page/nope.md"}); err == nil {
		t.Errorf("a missing page was read")
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "guide"})
	agents, _ := a.ReadFile(ctx, "main", "AGENTS.md")
	if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != agents.Content {
		t.Fatalf("prompt guide = %+v, %v; want AGENTS.md", p, err)
	}
}

// TestViews: a view of a branch reads the branch (and follows it); a
// draft's pages are found by search and read at once; a write goes to
// main whatever the view.
func TestViews(t *testing.T) {
	a := fixture(t)
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("tester"))
	if _, err := a.CreateBranch(ctx, "old", "main"); err != nil {
		t.Fatal(err)
	}
	f, _ := a.ReadFile(ctx, "main", "concepts/paper.md")
	if _, err := a.Write(ctx, app.WriteRequest{Message: "edit", Writes: []app.PageWrite{{Path: "concepts/paper.md", Expected: f.Entry.Blob.String(),
		Content: []byte(f.Content + "\nZanzibar watermarks.\n")}}}); err != nil {
		t.Fatal(err)
	}
	old := connect(t, mcpserver.New(a, &mcpserver.Options{View: a.View("old")}), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	if out, _ := call(t, old, "search", map[string]any{"query": "zanzibar"}); len(out["matches"].([]any)) != 0 {
		t.Errorf("a view of the branch old finds main's new text: %v", out)
	}
	main := connect(t, mcpserver.New(a, nil), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	if out, _ := call(t, main, "search", map[string]any{"query": "zanzibar"}); len(out["matches"].([]any)) != 1 {
		t.Errorf("main's view does not find its new text: %v", out)
	}
	draft := a.DraftView("", func(context.Context) ([]app.FileEdit, error) {
		return []app.FileEdit{{Path: "concepts/quill.md", Content: []byte("---\ntitle: Quill\ntype: concept\n---\n# Quill\n\nA goose feather, see [[Paper]].\n")}}, nil
	})
	dc := connect(t, mcpserver.New(a, &mcpserver.Options{View: draft}), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	out, _ := call(t, dc, "search", map[string]any{"query": "goose feather"})
	if ms := out["matches"].([]any); len(ms) != 1 || ms[0].(map[string]any)["path"] != "concepts/quill.md" {
		t.Errorf("a draft's new page is not found by search: %v", out)
	}
	if out, isErr := call(t, dc, "read_page", map[string]any{"id": "Quill"}); isErr || out["path"] != "concepts/quill.md" {
		t.Errorf("a draft's new page is not read: %v", out)
	}
	if out, _ := call(t, dc, "backlinks", map[string]any{"page": "concepts/paper.md"}); !strings.Contains(jsonOf(out), "concepts/quill.md") {
		t.Errorf("a draft's link is not among the backlinks: %v", out)
	}
	if _, err := a.ReadFile(ctx, "main", "concepts/quill.md"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("reading a draft wrote it into main: %v", err)
	}

	// An agent's workspace: main's files in a folder, one page added and
	// one removed by the agent, read at each call.
	ws := filepath.Join(t.TempDir(), "ws")
	if _, err := a.ExportFiles(ctx, ws, "main"); err != nil {
		t.Fatal(err)
	}
	fc := connect(t, mcpserver.New(a, &mcpserver.Options{View: a.FolderView("", ws, nil)}), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	if out, _ := call(t, fc, "search", map[string]any{"query": "zinnober"}); len(out["matches"].([]any)) != 0 {
		t.Fatalf("zinnober is in the sample brain: %v", out)
	}
	os.WriteFile(filepath.Join(ws, "concepts", "lampblack.md"), []byte("---\ntitle: Lampblack\ntype: concept\n---\n# Lampblack\n\nSoot and zinnober for [[Printing ink]].\n"), 0o644)
	os.Remove(filepath.Join(ws, "concepts", "paper.md"))
	if out, _ := call(t, fc, "search", map[string]any{"query": "zinnober soot"}); !strings.Contains(jsonOf(out), "concepts/lampblack.md") {
		t.Errorf("a page the agent wrote into its workspace is not found: %v", out)
	}
	if out, isErr := call(t, fc, "read_page", map[string]any{"id": "concepts/paper.md"}); !isErr {
		t.Errorf("a page the agent removed from its workspace is still read: %v", out)
	}

	// The same, with the snapshot of the workspace as it was written (what
	// the command runtime gives the view): an edit that keeps a page's size
	// and sets its time back is still seen.
	ws2 := filepath.Join(t.TempDir(), "ws2")
	head, err := a.ResolveCommit(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := worktree.MaterializeSnapshot(ctx, a.Vault().Store, head.Tree, ws2)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	snap.Start()
	sc := connect(t, mcpserver.New(a, &mcpserver.Options{View: a.FolderView("", ws2, snap)}), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	ink := filepath.Join(ws2, "concepts", "printing-ink.md")
	fi, _ := os.Stat(ink)
	data, _ := os.ReadFile(ink)
	edited := strings.Replace(string(data), "Printing ink", "Zinnober ink", 1)
	os.WriteFile(ink, []byte(edited), 0o644)
	os.Chtimes(ink, fi.ModTime(), fi.ModTime())
	if out, _ := call(t, sc, "search", map[string]any{"query": "zinnober"}); !strings.Contains(jsonOf(out), "concepts/printing-ink.md") {
		t.Errorf("an edit that keeps size and time is not seen through the snapshot: %v", out)
	}
}

// TestBudget: a result over the budget is cut and says so, with a way on.
func TestBudget(t *testing.T) {
	a := fixture(t)
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("tester"))
	f, _ := a.ReadFile(ctx, "main", "concepts/paper.md")
	big := f.Content + strings.Repeat("Rag paper was made from linen. ", 4000)
	if _, err := a.Write(ctx, app.WriteRequest{Message: "long", Writes: []app.PageWrite{{Path: "concepts/paper.md", Expected: f.Entry.Blob.String(), Content: []byte(big)}}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.New(a, &mcpserver.Options{MaxResult: 8 << 10}), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	var body strings.Builder
	offset := 0.0
	for range 50 {
		out, isErr := call(t, cs, "read_page", map[string]any{"id": "concepts/paper", "offset": offset})
		if isErr {
			t.Fatalf("read_page: %v", out)
		}
		if n := len(jsonOf(out)); n > 8<<10 {
			t.Errorf("a result of %d bytes, over the 8 KiB budget", n)
		}
		body.WriteString(out["body"].(string))
		next, _ := out["next_offset"].(float64)
		if next == 0 {
			break
		}
		if out["note"] == nil {
			t.Errorf("a cut result has no note")
		}
		offset = next
	}
	if !strings.HasSuffix(big, body.String()) || body.Len() < len(big)-2000 {
		t.Errorf("reading on with next_offset gave %d bytes of the body, want all of it", body.Len())
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestWorkingSet: a server on a working set keeps every read tool to its
// pages (and index.md and the vault's rules): search and lists leave out
// the rest, a read of a page outside is not found, links and backlinks
// that lead outside are left out.
func TestWorkingSet(t *testing.T) {
	a := fixture(t)
	in := []string{"concepts/paper.md", "concepts/printing-ink.md"}
	cs := connect(t, mcpserver.New(a, &mcpserver.Options{Scope: in}), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	allowed := map[string]bool{"concepts/paper.md": true, "concepts/printing-ink.md": true, "index.md": true, "AGENTS.md": true, "EVA.md": true, "CLAUDE.md": true}
	paths := func(v any, key string) []string {
		var out []string
		for _, m := range v.([]any) {
			out = append(out, m.(map[string]any)[key].(string))
		}
		return out
	}
	for _, q := range []string{"paper", "printing", "Gutenberg"} {
		out, isErr := call(t, cs, "search", map[string]any{"query": q})
		if isErr {
			t.Fatalf("search %q: %v", q, out)
		}
		for _, p := range paths(out["matches"], "path") {
			if !allowed[p] {
				t.Errorf("search %q found %s, outside the working set", q, p)
			}
		}
	}
	if out, isErr := call(t, cs, "read_page", map[string]any{"id": "concepts/paper"}); isErr || out["path"] != "concepts/paper.md" {
		t.Errorf("read_page of a page in the working set: %v", out)
	}
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"read_page", map[string]any{"id": "entities/mainz"}},
		{"read_page", map[string]any{"id": "Johannes Gutenberg"}},
		{"inspect", map[string]any{"page": "entities/mainz"}},
		{"links", map[string]any{"page": "entities/mainz"}},
		{"backlinks", map[string]any{"page": "entities/mainz"}},
		{"neighbors", map[string]any{"id": "entities/mainz"}},
		{"shortest_path", map[string]any{"from": "concepts/paper", "to": "entities/martin-luther"}},
	} {
		if out, isErr := call(t, cs, tool.name, tool.args); !isErr || out["code"] != "not_found" {
			t.Errorf("%s %v outside the working set = %v, want not found", tool.name, tool.args, out)
		}
	}
	out, _ := call(t, cs, "list_pages", map[string]any{})
	for _, p := range paths(out["pages"], "path") {
		if !allowed[p] {
			t.Errorf("list_pages lists %s, outside the working set", p)
		}
	}
	out, _ = call(t, cs, "neighbors", map[string]any{"id": "concepts/paper"})
	for _, k := range []string{"outgoing", "incoming"} {
		for _, id := range out[k].([]any) {
			if !allowed[id.(string)+".md"] {
				t.Errorf("neighbors of concepts/paper: %s %s is outside the working set", k, id)
			}
		}
	}
	out, _ = call(t, cs, "backlinks", map[string]any{"page": "concepts/paper"})
	for _, p := range paths(out["links"], "from") {
		if !allowed[p] {
			t.Errorf("backlinks of concepts/paper: from %s, outside the working set", p)
		}
	}
}

// TestBacklinksInParts: the links into a page a thousand others link to
// are read a part at a time, with the total and the next part's cursor;
// read_page names the pages of the first part and says there are more;
// inspect holds the first InspectBacklinks and the total.
func TestBacklinksInParts(t *testing.T) {
	a := fixture(t)
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("tester"))
	var writes []app.PageWrite
	for i := range 1004 {
		writes = append(writes, app.PageWrite{Path: fmt.Sprintf("notes/n%04d.md", i), Content: []byte("See [[Paper]].\n")})
	}
	if _, err := a.Write(ctx, app.WriteRequest{Message: "many links", Writes: writes}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.New(a, nil), mcpserver.Stdio("", []auth.Scope{auth.Read}))
	var froms []string
	total := -1.0
	cursor := ""
	for range 100 {
		out, isErr := call(t, cs, "backlinks", map[string]any{"page": "concepts/paper", "cursor": cursor})
		if isErr {
			t.Fatalf("backlinks: %v", out)
		}
		if total >= 0 && out["total"] != total {
			t.Errorf("the total went from %v to %v between parts", total, out["total"])
		}
		total = out["total"].(float64)
		for _, l := range out["links"].([]any) {
			froms = append(froms, l.(map[string]any)["from"].(string))
		}
		next, _ := out["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if total < 1004 || len(froms) != int(total) || !slices.IsSorted(froms) {
		t.Errorf("backlinks in parts: %d links of a total of %v, sorted %v; want them all, in order", len(froms), total, slices.IsSorted(froms))
	}
	out, isErr := call(t, cs, "read_page", map[string]any{"id": "concepts/paper"})
	if isErr || len(out["incomingFrom"].([]any)) > app.MaxBacklinks || !strings.Contains(fmt.Sprint(out["note"]), "backlinks lists them all") {
		t.Errorf("read_page of a page %v links lead to: %d pages linking, note %v", total, len(out["incomingFrom"].([]any)), out["note"])
	}
	out, isErr = call(t, cs, "neighbors", map[string]any{"id": "concepts/paper"})
	if isErr || len(out["incoming"].([]any)) > app.MaxBacklinks || !strings.Contains(fmt.Sprint(out["note"]), "backlinks pages through them all") {
		t.Errorf("neighbors of a page %v links lead to: %d incoming, note %v", total, len(out["incoming"].([]any)), out["note"])
	}
	out, isErr = call(t, cs, "inspect", map[string]any{"page": "concepts/paper"})
	if isErr || len(out["backlinks"].([]any)) > app.InspectBacklinks || out["backlinks_total"] != total {
		t.Errorf("inspect of a page %v links lead to: %d backlinks, total %v", total, len(out["backlinks"].([]any)), out["backlinks_total"])
	}
}
