package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"cairn"
	"cairn/auth"
)

// body is a response whose body is a T.
type body[T any] struct {
	Body T
}

// ok answers v, or the error: a handler's last line, around the call of
// the application layer it makes.
func ok[T any](v T, err error) (*body[T], error) {
	if err != nil {
		return nil, err
	}
	return &body[T]{Body: v}, nil
}

// list answers xs as Items (an empty list, never null), or the error.
func list[T any](xs []T, err error) (*body[Items[T]], error) {
	if err != nil {
		return nil, err
	}
	return items(xs), nil
}

// Base is the prefix of every route of the API.
const Base = "/api/v1"

// Body limits: most requests are small; a changeset or an upload may be as
// large as Options.MaxBody.
const smallBody = 1 << 20

// route describes one route for register: its operation and the scope it
// needs. Big routes take bodies up to Options.MaxBody.
type route struct {
	method, path, id, summary string
	scope                     auth.Scope
	big                       bool
	raw                       bool  // the answer is a file's bytes, of the media type its name says
	status                    int   // the status of success; default 200
	errors                    []int // statuses it may answer beside the usual errors
	// agent: the answer waits for the vault's agent (a question, a health
	// check), which its own timeout (agent.timeout) bounds, not the
	// server's write timeout.
	agent bool
}

// register adds a route served by h, authorized by its scope: the one
// place a route's scope is declared, in the OpenAPI document too
// (security: bearer with the scope). A route that asks for a change (not a
// GET) is audited. h's errors become problems.
func register[I, O any](s *Server, r route, h func(context.Context, *I) (*O, error)) {
	op := huma.Operation{
		OperationID:     r.id,
		Method:          r.method,
		Path:            Base + r.path,
		Summary:         r.summary,
		Description:     "Needs a token with the " + string(r.scope) + " scope.",
		Tags:            []string{tagOf(r.path)},
		DefaultStatus:   r.status,
		Security:        []map[string][]string{{"bearer": {string(r.scope)}}},
		Metadata:        map[string]any{"scope": r.scope},
		MaxBodyBytes:    smallBody,
		BodyReadTimeout: s.opts.BodyTimeout,
		Errors:          []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable},
	}
	if r.big {
		// A large body may take longer than a small one; the connection's
		// read timeout still bounds it.
		op.MaxBodyBytes, op.BodyReadTimeout = s.opts.MaxBody, s.opts.ReadTimeout
		op.Errors = append(op.Errors, http.StatusRequestEntityTooLarge)
	}
	op.Errors = append(op.Errors, r.errors...)
	if r.raw {
		op.Responses = map[string]*huma.Response{strconv.Itoa(cmp.Or(r.status, http.StatusOK)): {
			Description: "The bytes, as the Content-Type header says.",
			Content:     map[string]*huma.MediaType{"*/*": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}},
		}}
	}
	mutates := r.method != http.MethodGet
	op.Middlewares = huma.Middlewares{s.authorize(r.scope, mutates), limitBody(op.MaxBodyBytes)}
	if r.agent {
		op.Middlewares = append(op.Middlewares, noWriteDeadline)
	}
	huma.Register(s.api, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			p := problemOf(err)
			switch {
			case ctx.Err() != nil:
				// The client went away; nothing to answer or report.
			case p.Status >= 500:
				s.log.Error("request failed", "route", r.method+" "+r.path, "err", err)
				if p.Code == cairn.EINTERNAL {
					// What went wrong is in the log; the answer names no
					// file or table of the server's.
					p = newProblem(cairn.EINTERNAL, "the server failed to answer this request",
						"This is a bug in cairn or a damaged vault; the server's log has the details (cairn doctor checks the vault).")
				}
			}
			return nil, p
		}
		return out, nil
	})
}

// limitBody bounds the body a route reads, whatever reads it (huma bounds
// JSON bodies itself, not multipart uploads): a body that says it is
// larger gets 413 at once, and one that turns out larger fails to read.
func limitBody(limit int64) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		r, w := humago.Unwrap(ctx)
		if r.ContentLength > limit {
			writeProblemCtx(ctx, newProblem(codeTooLarge, fmt.Sprintf("the body is %d bytes; this route takes at most %d", r.ContentLength, limit),
				statusHints[codeTooLarge]))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next(ctx)
	}
}

// noWriteDeadline lifts the connection's write deadline for a request
// whose answer waits for the vault's agent: its own timeout bounds it, and
// the client's going away cancels it.
func noWriteDeadline(ctx huma.Context, next func(huma.Context)) {
	_, w := humago.Unwrap(ctx)
	http.NewResponseController(w).SetWriteDeadline(time.Time{})
	next(ctx)
}

// tagOf groups a route in the document by its first path segment.
func tagOf(path string) string {
	seg := path[1:]
	for i, c := range seg {
		if c == '/' || c == '?' {
			return seg[:i]
		}
	}
	return seg
}

// routes is the table of the API: every route with the scope it needs.
func (s *Server) routes() {
	R, P, V, A := auth.Read, auth.Propose, auth.Review, auth.Admin
	get, post, put, del := http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete

	// The vault, its files and history.
	register(s, route{method: get, path: "/vault", id: "get-vault", summary: "The vault: its folder, its branch heads, the server's limits", scope: R}, s.vault)
	register(s, route{method: get, path: "/files", id: "read-file", summary: "A file at a revision (ETag: the file's object hash)", scope: R}, s.readFile)
	register(s, route{method: get, path: "/files/raw", id: "read-file-raw", summary: "A file's bytes at a revision", scope: R, raw: true}, s.readFileRaw)
	register(s, route{method: get, path: "/list", id: "list-files", summary: "What a folder holds at a revision, in pages", scope: R}, s.list)
	register(s, route{method: get, path: "/log", id: "log", summary: "The commits reachable from a revision, newest first, in pages", scope: R}, s.log_)
	register(s, route{method: get, path: "/commit", id: "show-commit", summary: "A commit and what it changed", scope: R}, s.showCommit)
	register(s, route{method: get, path: "/diff", id: "diff", summary: "The changes between two revisions", scope: R}, s.diff)

	// Working trees: folders of the server's machine, whose local edits
	// are their owner's, not yet the vault's. Only an admin's token (the
	// owner's, that commands run there use) reads or commits them.
	register(s, route{method: get, path: "/worktrees", id: "list-worktrees", summary: "The vault's working trees", scope: R}, s.worktrees)
	register(s, route{method: post, path: "/worktree", id: "find-worktree", summary: "The working tree at a folder (a secondary tree moved there is recorded there)", scope: A}, s.worktree)
	register(s, route{method: get, path: "/worktree/diff", id: "diff-worktree", summary: "The changes from a revision to a working tree's folder", scope: A}, s.folderDiff)
	register(s, route{method: get, path: "/status", id: "status", summary: "A working tree's local edits", scope: A}, s.status)
	register(s, route{method: post, path: "/commit", id: "commit-edits", summary: "Commit a working tree's local edits (through admission on main)", scope: A}, s.commitEdits)

	// The index.
	register(s, route{method: get, path: "/search", id: "search", summary: "Full-text search of main's pages, best first, in pages", scope: R}, s.search)
	register(s, route{method: get, path: "/links", id: "links", summary: "A page's links and where each leads", scope: R}, s.links)
	register(s, route{method: get, path: "/backlinks", id: "backlinks", summary: "The links from other pages to a page, a part at a time", scope: R}, s.backlinks)
	register(s, route{method: get, path: "/lint", id: "lint", summary: "Lint findings of main or of a revision", scope: R}, s.lint)
	register(s, route{method: get, path: "/pages", id: "list-pages", summary: "Pages by folder, type and conditions on frontmatter fields (where), by path, paged", scope: R}, s.pages)
	register(s, route{method: get, path: "/tools", id: "list-tools", summary: "Eva's profile tools, which POST /ask runs (tool, focus, format, count)", scope: R}, s.tools)
	register(s, route{method: get, path: "/types", id: "list-types", summary: "The types the vault declares (types/), with their page counts", scope: R}, s.types)
	register(s, route{method: get, path: "/types/{name}", id: "show-type", summary: "A declared type: its declaration, its JSON Schema and the pages that break it", scope: R}, s.typeDetail)
	register(s, route{method: post, path: "/ask", id: "ask", summary: "Ask the vault: its agent answers from main, read-only, with citations", scope: R, agent: true}, s.ask)
	register(s, route{method: post, path: "/health-checks", id: "check-health", summary: "Run the agent's health check of main (read-only) and keep its report", scope: P, status: http.StatusCreated, agent: true}, s.checkHealth)
	register(s, route{method: get, path: "/health-checks", id: "list-health-checks", summary: "The kept health reports, newest first", scope: R}, s.healthChecks)
	register(s, route{method: get, path: "/health-checks/{id}", id: "show-health-check", summary: "One kept health report", scope: R}, s.healthCheck)

	// Branches, tags, merges, reverts, changesets.
	register(s, route{method: get, path: "/branches", id: "list-branches", summary: "The branches", scope: R}, s.branches)
	register(s, route{method: get, path: "/branch", id: "get-branch", summary: "One branch (ETag: its head)", scope: R}, s.branch)
	register(s, route{method: post, path: "/branches", id: "create-branch", summary: "Make a branch (it must not exist)", scope: A, status: http.StatusCreated}, s.createBranch)
	register(s, route{method: del, path: "/branch", id: "delete-branch", summary: "Delete a branch (If-Match: its expected head)", scope: A}, s.deleteBranch)
	register(s, route{method: get, path: "/tags", id: "list-tags", summary: "The tags", scope: R}, s.tags)
	register(s, route{method: post, path: "/tags", id: "create-tag", summary: "Make a tag (tags never move)", scope: A, status: http.StatusCreated}, s.createTag)
	register(s, route{method: post, path: "/merge", id: "merge", summary: "Merge a branch into another (through admission into main)", scope: P}, s.merge)
	register(s, route{method: post, path: "/revert", id: "revert", summary: "Undo a commit with a new one (through admission on main)", scope: P}, s.revert)
	register(s, route{method: post, path: "/changes", id: "commit-changes", summary: "Commit a changeset made on a branch's head (If-Match: that head)", scope: P, big: true, errors: []int{http.StatusPreconditionRequired}}, s.commitChanges)

	// Proposals and their review.
	register(s, route{method: post, path: "/proposals", id: "propose-changes", summary: "Keep a changeset made on main's head (If-Match) for a person's review", scope: P, big: true, status: http.StatusCreated, errors: []int{http.StatusPreconditionRequired}}, s.proposeChanges)
	register(s, route{method: get, path: "/proposals", id: "list-proposals", summary: "Proposals: the held ones, or those of a status", scope: R}, s.proposals)
	register(s, route{method: get, path: "/proposals/{id}", id: "show-proposal", summary: "A proposal with what it changes", scope: R}, s.showProposal)
	register(s, route{method: post, path: "/proposals/{id}/accept", id: "accept-proposal", summary: "Accept a held proposal: merge it into main", scope: V}, s.accept)
	register(s, route{method: post, path: "/proposals/{id}/reject", id: "reject-proposal", summary: "Reject a held proposal", scope: V}, s.reject)
	register(s, route{method: post, path: "/proposals/{id}/recheck", id: "recheck-proposal", summary: "Run the gates again on a held proposal", scope: V}, s.recheck)

	// Sources and jobs.
	register(s, route{method: post, path: "/sources", id: "add-sources", summary: "Upload sources: store and queue them (a worker integrates them)", scope: P, big: true, status: http.StatusAccepted}, s.addSources)
	s.ingestRoute(route{method: post, path: "/ingest", id: "ingest", summary: "Upload sources and follow them until each has a verdict (a stream of JSON lines)", scope: P, big: true})
	register(s, route{method: get, path: "/sources", id: "list-sources", summary: "The sources, newest first", scope: R}, s.sources)
	register(s, route{method: get, path: "/sources/{ref}", id: "show-source", summary: "A source with its history", scope: R}, s.source)
	register(s, route{method: post, path: "/sources/{ref}/retry", id: "retry-source", summary: "Queue a failed or rejected source again", scope: P}, s.retrySource)
	register(s, route{method: get, path: "/jobs", id: "list-jobs", summary: "The jobs, newest first", scope: R}, s.jobs)
	register(s, route{method: get, path: "/jobs/{id}", id: "show-job", summary: "A job with what its agent did", scope: R}, s.job)
	register(s, route{method: post, path: "/jobs/{id}/cancel", id: "cancel-job", summary: "Cancel a job", scope: P}, s.cancelJob)
	register(s, route{method: post, path: "/jobs/{id}/retry", id: "retry-job", summary: "Run a job's source again", scope: P}, s.retryJob)

	// Events.
	s.eventsRoute(route{method: get, path: "/events", id: "events", summary: "The vault's events as they happen (server-sent events; resumes after Last-Event-ID)", scope: R})
	register(s, route{method: get, path: "/events/log", id: "event-log", summary: "The events after a cursor, in pages", scope: R}, s.eventLog)
	register(s, route{method: get, path: "/events/last", id: "last-event", summary: "The newest event's id", scope: R}, s.lastEvent)

	// Settings, maintenance, tokens, the audit.
	register(s, route{method: get, path: "/settings", id: "list-settings", summary: "Every setting of cairn.yaml with its value and default", scope: R}, s.settings)
	register(s, route{method: get, path: "/settings/{key}", id: "get-setting", summary: "One setting", scope: R}, s.setting)
	register(s, route{method: put, path: "/settings/{key}", id: "set-setting", summary: "Change one setting, as a commit on main through admission", scope: A}, s.setSetting)
	register(s, route{method: get, path: "/doctor", id: "doctor", summary: "Check the vault", scope: A}, s.doctor)
	register(s, route{method: post, path: "/gc", id: "gc", summary: "Collect what no branch, tag or pin reaches", scope: A}, s.gc)
	register(s, route{method: post, path: "/purge", id: "purge", summary: "Remove a file's content from all history", scope: A}, s.purge)
	register(s, route{method: post, path: "/reindex", id: "reindex", summary: "Rebuild main's index", scope: A}, s.reindex)
	register(s, route{method: get, path: "/tokens", id: "list-tokens", summary: "The tokens (never their secrets)", scope: A}, s.tokens)
	register(s, route{method: post, path: "/tokens", id: "create-token", summary: "Make a token; its secret is in the answer, once", scope: A, status: http.StatusCreated}, s.createToken)
	register(s, route{method: del, path: "/tokens/{id}", id: "revoke-token", summary: "Revoke a token", scope: A}, s.revokeToken)
	register(s, route{method: get, path: "/audit", id: "audit", summary: "The changes asked over the network: who, how, from where, with what status", scope: A}, s.auditLog)
}
