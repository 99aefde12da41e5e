package mcpserver

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

// catalog is every tool, in the order tools/list gives them.
func (s *Server) catalog() []tool {
	read := func(title string) *mcp.ToolAnnotations { return annotations(title, true, false, true) }
	change := func(destructive bool) *mcp.ToolAnnotations { return annotations("", false, destructive, false) }
	tools := []tool{
		// Eva's four read tools: Eva's names, arguments and result shapes.
		define("search", "Search pages",
			"Full-text search of the pages: every word must occur (\"a phrase\", prefix*; type and folder filter). "+
				"Returns {query, matches: [{id, title, type, score, excerpt}]}, best first.",
			auth.Read, read(""), searchTool),
		define("read_page", "Read a page",
			"A page by id (path without .md), path, file name or title: {id, title, type, frontmatter, body, "+
				"outgoingLinks, incomingFrom} and hash, the version to send as expected_hash when changing it.",
			auth.Read, read(""), readPageTool),
		define("neighbors", "Linked pages",
			"The pages a page links to (outgoing) and the pages linking to it (incoming), by resolved links.",
			auth.Read, read(""), neighborsTool),
		define("shortest_path", "Shortest path between pages",
			"The shortest chain of links (either direction) from one page to another: {from, to, path}; path is null when they are not connected.",
			auth.Read, read(""), shortestPathTool),
		// The rest of the read surface.
		define("list_pages", "List pages",
			"Pages by folder, type or frontmatter field, by path, paged: {pages: [{path, title, type, aliases, inbound}], total, next_cursor}.",
			auth.Read, read(""), listPagesTool),
		define("inspect", "Inspect a page",
			"Everything about one page: frontmatter, headings, resolved links, the first 100 backlinks and how many there are, lint findings and its last commits.",
			auth.Read, read(""), inspectTool),
		define("links", "A page's links",
			"The links of a page in order, each with where it resolves (resolved, broken or ambiguous), paged.",
			auth.Read, read(""), linksTool(false)),
		define("backlinks", "Links into a page",
			"The links from other pages into a page, paged.",
			auth.Read, read(""), linksTool(true)),
		define("lint", "Lint findings",
			"The lint findings of the vault or of one page (broken links, missing fields, orphans…), paged.",
			auth.Read, read(""), lintTool),
		define("log", "History",
			"The commits of the vault, or of one page, newest first, paged.",
			auth.Read, read(""), logTool),
		define("diff", "Compare two revisions",
			"The files that differ between two revisions (branches, tags, commits, main~3), with unified diffs when asked.",
			auth.Read, read(""), diffTool),
		define("list_branches", "Branches", "Every branch with its head.", auth.Read, read(""), refsTool(false)),
		define("list_tags", "Tags", "Every tag with its commit.", auth.Read, read(""), refsTool(true)),
		define("topology", "The vault's shape",
			"Counts of files, pages and links; pages by type and by top folder; the hubs (most linked to) and the orphans (linked from nowhere).",
			auth.Read, read(""), topologyTool),
		define("list_types", "Declared types",
			"The types the vault declares in types/ (a page's frontmatter type: names one), each with its page count and how many pages break it.",
			auth.Read, read(""), listTypesTool),
		define("get_schema", "A type's schema",
			"The JSON Schema 2020-12 of a declared type, with its fields as declared (what it inherits included), its declaration's errors and the findings of pages that break it: "+
				"write a page of the type to it. x-cairn-recommends lists recommended fields; x-cairn-link-to names the type a link field's page must be.",
			auth.Read, read(""), getSchemaTool),
		define("ask", "Ask the vault",
			"The vault's own agent answers a question from main, read-only, with the pages it rests on (each checked to exist) and their sources. "+
				"Offline by retrieval with the default agent; through a model with the built-in one. Always main, whatever the view.",
			auth.Read, annotations("", true, false, false), askTool),
		define("run_tool", "Run a profile tool",
			"One of Eva's seven profile tools, run by the vault's agent on main, read-only, with the pages it rests on: personal-review (Reflection), evidence-map, reading-threads (Threads map), decision-brief, options-review, flashcards (count 6-30), practice-exam (count 4-20; format mixed, multiple-choice, written, short-answer). "+
				"The default agent makes flashcards, practice exams and evidence maps offline from the pages' sentences; the others need a model. save keeps the result as an analysis held for review (scope propose).",
			auth.Read, annotations("", true, false, false), runToolTool),
		define("health", "Health",
			"cairn's version, the view, counts, whether the index is current, jobs by state, reviews held, and who you are with which scopes.",
			auth.Read, read(""), healthTool),
		define("list_sources", "Sources", "The sources ingested, newest first, by status.", auth.Read, read(""), listSourcesTool),
		define("list_jobs", "Jobs", "The ingest jobs, newest first, by state.", auth.Read, read(""), listJobsTool),
		define("job_status", "A job's progress", "One job with its source and its agent's activity so far.", auth.Read, read(""), jobStatusTool),
		define("list_reviews", "Reviews", "Changes held for review (status held) or decided (admitted, rejected, accepted, all).", auth.Read, read(""), listReviewsTool),
		define("show_review", "A review", "One held or decided change: why, its findings, the files it changes and, when asked, their diffs.", auth.Read, read(""), showReviewTool),
		// Writes: each a change to main through admission.
		define("write_page", "Write a page",
			"Create a page, or replace one's whole content. Send expected_hash (read_page's hash) to replace: a page that changed since is a conflict, never overwritten. "+
				"Returns the verdict: admitted with the commit, held with the review id, rejected with findings, or conflict with the current hash.",
			auth.Propose, change(true), writePageTool),
		define("edit_page", "Edit a page",
			"Change part of a page: the section under a heading, a frontmatter field set or removed, or an exact text replaced (it must occur the stated number of times).",
			auth.Propose, change(true), editPageTool),
		define("append_to_page", "Append to a page", "Add text at the end of a page.", auth.Propose, change(false), appendTool),
		define("move_page", "Move a page", "Move a page to a new path (links to it are not rewritten).", auth.Propose, change(true), moveTool),
		define("delete_page", "Delete a page", "Delete a page (admission usually holds deletions for a person).", auth.Propose, change(true), deleteTool),
		define("propose", "Change several files",
			"Several files changed at once, as one change through admission; hold keeps it for a person's review whatever the gates say.",
			auth.Propose, change(true), proposeTool),
		define("ingest", "Ingest a source",
			"Add a source (a name and its text: .md, .txt or .html, which is converted to Markdown; no fetching): the vault's agent integrates it. Returns at once with the job; job_status reports progress.",
			auth.Propose, annotations("", false, false, true), ingestTool),
		define("review_decide", "Decide on a review",
			"Accept or reject a held change (needs the review scope).",
			auth.Review, change(true), decideTool),
	}
	if s.opts.Draft != nil {
		// A draft's writer changes the draft only.
		tools = slices.DeleteFunc(tools, func(t tool) bool { return changesMain(t.def.Name) })
	}
	return tools
}

// changesMain reports whether a tool changes main whatever the server's
// draft, or runs an agent (ask, run_tool): a server on a draft, whose client is an
// agent, does not offer it.
func changesMain(tool string) bool {
	switch tool {
	case "propose", "ingest", "review_decide", "ask", "run_tool":
		return true
	}
	return false
}

// pageURI is a page's resource URI.
func pageURI(path string) string { return "cairn://page/" + (&url.URL{Path: path}).EscapedPath() }

// addResources adds the pages as resources (a template) and the vault's
// guidance as a prompt.
func (s *Server) addResources(srv *mcp.Server, caller *Caller) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "page", Title: "A page of the vault", URITemplate: "cairn://page/{+path}",
		Description: "A file of the vault by its path, as the server's view has it.", MIMEType: "text/markdown",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		rest, ok := strings.CutPrefix(uri, "cairn://page/")
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		path, err := url.PathUnescape(rest)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		var f *app.FileAt
		err = s.view.Read(ctx, func(sn *app.Snapshot) (err error) {
			f, err = sn.ReadFile(ctx, path)
			return err
		})
		if err != nil {
			if cairn.ErrorCode(err) == cairn.ENOTFOUND || cairn.ErrorCode(err) == cairn.EINVALID {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			return nil, err
		}
		mime := "text/markdown"
		if !strings.HasSuffix(path, ".md") {
			mime = "text/plain"
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: f.Content}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "guide", Title: "How this vault wants its pages",
		Description: "The vault's guidance for agents: its AGENTS.md, or cairn's own when it has none."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text := defaultGuide
			err := s.view.Read(ctx, func(sn *app.Snapshot) error {
				for _, name := range []string{"AGENTS.md", "EVA.md", "CLAUDE.md"} {
					if f, err := sn.ReadFile(ctx, name); err == nil {
						text = f.Content
						return nil
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Description: "How to work on this vault",
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
}

const defaultGuide = `This vault is a wiki of linked Markdown pages.

- Before writing, search for the pages the subject already has and read them; extend a page rather than making a second one.
- Each page has frontmatter with a title and a type; link related pages with [[wikilinks]] by title or path.
- Sources under raw/ are read-only: pages cite them, nothing changes them.
- Change a page with the hash you read it at (expected_hash): if it changed since, read it again and redo your change.
- Every change is judged by admission: it may be admitted, held for a person, or rejected with findings that say why.`
