package webui

import (
	"cmp"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/auth"
	"cairn/index"
	"cairn/lint"
)

// routes registers every view. Each calls the application layer, as the
// API's routes do.
func (u *UI) routes() {
	assets, _ := fs.Sub(files, "assets")
	u.mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer(assets)))
	u.mux.HandleFunc("GET /signin", u.signinForm)
	u.mux.HandleFunc("POST /signin", u.signin)
	u.mux.HandleFunc("POST /lang", u.setLanguage)
	u.handle("POST /signout", auth.Read, u.signout)
	u.handle("GET /{$}", auth.Read, u.home)
	u.handle("GET /pages/{path...}", auth.Read, u.reader)
	u.handle("GET /search", auth.Read, u.search)
	u.handle("GET /search/results", auth.Read, u.searchResults)
	u.handle("GET /review", auth.Read, u.queue)
	u.handle("GET /review/{id}", auth.Read, u.proposal)
	u.handle("POST /review/{id}/accept", auth.Review, u.decide)
	u.handle("POST /review/{id}/reject", auth.Review, u.decide)
	u.handle("POST /review/{id}/recheck", auth.Review, u.decide)
	u.handle("GET /history", auth.Read, u.history)
	u.handle("GET /commits/{rev}", auth.Read, u.commit)
	u.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s, _ := u.session(r)
		u.fail(w, r, s, cairn.Errorf(cairn.ENOTFOUND, "there is no page %s here", r.URL.Path).
			WithHint("Start from the home page."))
	})
}

// assetServer serves the embedded assets, to be cached for a day.
func assetServer(assets fs.FS) http.Handler {
	fsrv := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		fsrv.ServeHTTP(w, r)
	})
}

// signinForm shows the sign-in page.
func (u *UI) signinForm(w http.ResponseWriter, r *http.Request) {
	data := map[string]string{"Next": safeNext(r.URL.Query().Get("next")), "Why": r.URL.Query().Get("why")}
	// Only a sign-in link's token is offered as one: another token in
	// the address would sign a person in as someone else.
	if link := r.URL.Query().Get("link"); link != "" && u.app.IsSignInLink(r.Context(), link) {
		data["Link"] = link
	}
	if err := u.write(w, r, http.StatusOK, "signin", page{Title: "Sign in", Version: u.opts.Version, Data: data}); err != nil {
		u.fail(w, r, nil, err)
	}
}

// signin makes a session of the token the form gives. The form is small
// and URL-encoded; the token's rate counts each sign-in.
func (u *UI) signin(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		u.fail(w, r, nil, cairn.Errorf(cairn.EINVALID, "the sign-in form is sent URL-encoded").WithHint("Sign in from the sign-in page."))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := parseForm(r); err != nil {
		u.fail(w, r, nil, err)
		return
	}
	secret := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	if t, err := u.app.Authorizer().Authenticate(r.Context(), secret); err == nil {
		if err := u.limit(w, r, t); err != nil {
			u.fail(w, r, nil, err)
			return
		}
	}
	tok, err := u.app.SignIn(r.Context(), secret)
	if err != nil {
		status := status(err)
		data := map[string]string{"Next": next, "Why": err.Error() + " " + cairn.ErrorHint(err)}
		if werr := u.write(w, r, status, "signin", page{Title: "Sign in", Version: u.opts.Version, Data: data}); werr != nil {
			u.fail(w, r, nil, werr)
		}
		return
	}
	setCookie(w, r, tok.Secret, tok.Token.Expires)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signout ends the session.
func (u *UI) signout(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := u.app.SignOut(r.Context(), s.secret); err != nil {
		return err
	}
	clearCookie(w, r)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
	return nil
}

// safeNext is where to go after signing in: a path of this site, or home.
// Anything a browser could read as another site — "//host", a backslash,
// a control character it would strip — goes home.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsFunc(next, func(r rune) bool {
		return r == '\\' || r < 0x20 || r == 0x7f
	}) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

// homeHeld is how many held proposals the home page lists.
const homeHeld = 20

// home shows the vault's counts, its last commits, the held proposals and
// the last jobs.
func (u *UI) home(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	var data struct {
		Stats    index.Stats
		Commits  []*cairn.Commit
		Held     []*cairn.Proposal
		MoreHeld bool
		Decided  []*cairn.Proposal
		Jobs     []*app.Job
	}
	err := u.app.View("").Read(ctx, func(snap *app.Snapshot) error {
		var err error
		data.Stats, err = snap.Stats(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if data.Commits, err = u.app.Log(ctx, "main", app.LogOptions{Limit: 10}); err != nil {
		return err
	}
	if data.Held, err = u.app.Proposals(ctx, admit.ProposalFilter{Status: cairn.ProposalHeld, Limit: homeHeld + 1}); err != nil {
		return err
	}
	if len(data.Held) > homeHeld {
		data.Held, data.MoreHeld = data.Held[:homeHeld], true
	}
	all, err := u.app.Proposals(ctx, admit.ProposalFilter{Status: "all", Limit: 20})
	if err != nil {
		return err
	}
	for _, p := range all {
		if p.Status != cairn.ProposalHeld && len(data.Decided) < 8 {
			data.Decided = append(data.Decided, p)
		}
	}
	if data.Jobs, err = u.app.Jobs(ctx, app.JobFilter{Limit: 5}); err != nil {
		return err
	}
	return u.show(w, r, s, "home", "Home", "home", data)
}

// field is one frontmatter field as the reader shows it.
type field struct {
	Key, Value string
}

// reader shows a page at a revision (?at=REF, default main): rendered,
// with its frontmatter, links, backlinks, lint findings and history.
func (u *UI) reader(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	path := r.PathValue("path")
	at := r.URL.Query().Get("at")
	var data struct {
		At       string
		In       *app.Inspection
		Body     template.HTML
		Raw      string
		Fields   []field
		Markdown bool
	}
	data.At = at
	err := u.app.View(at).Read(ctx, func(snap *app.Snapshot) error {
		in, err := snap.Inspect(ctx, path, 10)
		if err != nil {
			return err
		}
		f, err := snap.ReadFile(ctx, in.Page.Path)
		if err != nil {
			return err
		}
		data.In = in
		data.Markdown = strings.HasSuffix(strings.ToLower(in.Page.Path), ".md")
		if data.Markdown {
			data.Body, err = u.render.Render(in.Page.Path, []byte(f.Content), in.Links, at)
		} else {
			data.Raw = f.Content
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(data.In.Page.Frontmatter)) {
		data.Fields = append(data.Fields, field{k, fmtValue(data.In.Page.Frontmatter[k])})
	}
	return u.show(w, r, s, "reader", cmp.Or(data.In.Page.Title, data.In.Page.Path), "", data)
}

// searchData is what the search view and its results show.
type searchData struct {
	Q, Type, Folder string
	Results         []result
	Searched        bool
}

// result is one search result, its snippet cut into plain and matching
// parts.
type result struct {
	index.SearchResult
	Parts []part
}

type part struct {
	Text  string
	Match bool
}

// search shows the search page, with results when it has a query.
func (u *UI) search(w http.ResponseWriter, r *http.Request, s *session) error {
	data, err := u.runSearch(r)
	if err != nil {
		return err
	}
	return u.show(w, r, s, "search", "Search", "search", data)
}

// searchResults answers the results alone, for the search page's
// results as one types.
func (u *UI) searchResults(w http.ResponseWriter, r *http.Request, s *session) error {
	data, err := u.runSearch(r)
	if err != nil {
		return err
	}
	return u.write(w, r, http.StatusOK, "fragment-results", page{Session: s, Data: data})
}

func (u *UI) runSearch(r *http.Request) (*searchData, error) {
	q := r.URL.Query()
	data := &searchData{Q: strings.TrimSpace(q.Get("q")), Type: q.Get("type"), Folder: q.Get("folder")}
	if data.Q == "" {
		return data, nil
	}
	data.Searched = true
	res, err := u.app.Search(r.Context(), index.SearchQuery{Text: data.Q, Type: data.Type, Folder: data.Folder, Limit: 30})
	if err != nil {
		return nil, err
	}
	for _, sr := range res {
		data.Results = append(data.Results, result{SearchResult: sr, Parts: highlight(sr.Snippet, sr.Matches)})
	}
	return data, nil
}

// highlight cuts a snippet at its matches.
func highlight(snippet string, matches [][2]int) []part {
	var out []part
	pos := 0
	for _, m := range matches {
		if m[0] < pos || m[1] > len(snippet) || m[0] >= m[1] {
			continue
		}
		if m[0] > pos {
			out = append(out, part{Text: snippet[pos:m[0]]})
		}
		out = append(out, part{Text: snippet[m[0]:m[1]], Match: true})
		pos = m[1]
	}
	if pos < len(snippet) {
		out = append(out, part{Text: snippet[pos:]})
	}
	return out
}

// queue shows the proposals held for review.
func (u *UI) queue(w http.ResponseWriter, r *http.Request, s *session) error {
	status := cmp.Or(r.URL.Query().Get("status"), cairn.ProposalHeld)
	ps, err := u.app.Proposals(r.Context(), admit.ProposalFilter{Status: status, Limit: 100})
	if err != nil {
		return err
	}
	return u.show(w, r, s, "queue", "Review", "review", map[string]any{"Status": status, "Proposals": ps})
}

// fileDiff is one file of a diff as the review and history views show it.
type fileDiff struct {
	Change cairn.Change
	Old    string // a renamed file's old path
	Lines  []diffLine
	// Rows are the lines side by side: the old file's on the left, the
	// new one's on the right, a run of removed lines beside the run of
	// added lines that follows it.
	Rows []diffRow
}

type diffLine struct {
	Class, Text string
}

// diffRow is one row of a side-by-side diff; a side's Class is "" where
// it has no line.
type diffRow struct {
	Left, Right diffLine
}

// diffView is a diff as a view shows it: unified, or side by side
// (?diff=split).
type diffView struct {
	Files []fileDiff
	Split bool
	q     url.Values
}

// newDiffView is the diff of files as the request asks to see it.
func newDiffView(r *http.Request, files []fileDiff) diffView {
	q := r.URL.Query()
	return diffView{Files: files, Split: q.Get("diff") == "split", q: q}
}

// Query is the request's address in the same view, showing the diff
// split or not.
func (d diffView) Query(split bool) template.URL {
	q := url.Values{}
	for k, v := range d.q {
		if k != "diff" && k != "done" {
			q[k] = v
		}
	}
	if split {
		q.Set("diff", "split")
	}
	return template.URL("?" + q.Encode())
}

// sideBySide pairs a diff's lines into rows.
func sideBySide(lines []diffLine) []diffRow {
	var rows []diffRow
	for i := 0; i < len(lines); {
		l := lines[i]
		switch l.Class {
		case "file":
			i++
			continue
		case "hunk":
			rows = append(rows, diffRow{Left: l, Right: l})
			i++
			continue
		case "ctx":
			t := diffLine{"ctx", strings.TrimPrefix(l.Text, " ")}
			rows = append(rows, diffRow{Left: t, Right: t})
			i++
			continue
		}
		var dels, adds []diffLine
		for ; i < len(lines) && lines[i].Class == "del"; i++ {
			dels = append(dels, diffLine{"del", lines[i].Text[1:]})
		}
		for ; i < len(lines) && lines[i].Class == "add"; i++ {
			adds = append(adds, diffLine{"add", lines[i].Text[1:]})
		}
		for k := range max(len(dels), len(adds)) {
			var r diffRow
			if k < len(dels) {
				r.Left = dels[k]
			}
			if k < len(adds) {
				r.Right = adds[k]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// diffs pairs each change with its patch, cut into lines.
func diffs(changes []cairn.Change, patches []string) []fileDiff {
	out := make([]fileDiff, len(changes))
	for i, c := range changes {
		out[i].Change = c
		if c.Kind == cairn.Renamed {
			out[i].Old = c.Old.Path
		}
		if i >= len(patches) {
			continue
		}
		inHunk := false
		for _, l := range strings.Split(strings.TrimSuffix(patches[i], "\n"), "\n") {
			class := "ctx"
			switch {
			case !inHunk && !strings.HasPrefix(l, "@@"):
				class = "file" // the header: --- a/x, +++ b/x
			case strings.HasPrefix(l, "@@"):
				inHunk = true
				class = "hunk"
			case strings.HasPrefix(l, "+"):
				class = "add"
			case strings.HasPrefix(l, "-"):
				class = "del"
			}
			out[i].Lines = append(out[i].Lines, diffLine{class, l})
		}
		out[i].Rows = sideBySide(out[i].Lines)
	}
	return out
}

// proposal shows one proposal: its findings in words and its diff, with
// the review's buttons for a session that may review.
func (u *UI) proposal(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := proposalID(r)
	if err != nil {
		return err
	}
	pv, err := u.app.ShowProposal(r.Context(), id, app.ProposalOptions{Patch: true})
	if err != nil {
		return err
	}
	data := map[string]any{"P": pv.Proposal, "Files": newDiffView(r, diffs(pv.Changes, pv.Patches)), "Done": r.URL.Query().Get("done")}
	return u.show(w, r, s, "proposal", fmt.Sprintf("Proposal %d", id), "review", data)
}

// decide accepts, rejects (with a reason) or rechecks a proposal, then
// shows it again.
func (u *UI) decide(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := proposalID(r)
	if err != nil {
		return err
	}
	action := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	switch action {
	case "accept":
		_, err = u.app.Accept(r.Context(), id)
	case "reject":
		reason := strings.TrimSpace(r.PostFormValue("reason"))
		if reason == "" {
			return cairn.Errorf(cairn.EINVALID, "a rejection needs a reason").WithHint("Say why in the reason field, for whoever proposed it.")
		}
		_, err = u.app.Reject(r.Context(), id, reason)
	case "recheck":
		_, err = u.app.Recheck(r.Context(), id)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/review/%d?done=%s", id, action), http.StatusSeeOther)
	return nil
}

// proposalID reads the {id} of the path.
func proposalID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, cairn.Errorf(cairn.EINVALID, "%q is not a proposal's number", r.PathValue("id")).WithHint("Open a proposal from the review queue.")
	}
	return id, nil
}

// history shows the log of a revision (?ref=, default main).
func (u *UI) history(w http.ResponseWriter, r *http.Request, s *session) error {
	ref := r.URL.Query().Get("ref")
	cs, err := u.app.Log(r.Context(), cmp.Or(ref, "main"), app.LogOptions{Limit: 100})
	if err != nil {
		return err
	}
	branches, err := u.app.Branches(r.Context())
	if err != nil {
		return err
	}
	tags, err := u.app.Tags(r.Context())
	if err != nil {
		return err
	}
	return u.show(w, r, s, "history", "History", "history", map[string]any{"Ref": cmp.Or(ref, "main"), "Commits": cs, "Branches": branches, "Tags": tags})
}

// commit shows a commit and its diff against its first parent.
func (u *UI) commit(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	d, err := u.app.ShowCommit(ctx, r.PathValue("rev"))
	if err != nil {
		return err
	}
	var patches []string
	if len(d.Commit.Parents) > 0 {
		td, err := u.app.Diff(ctx, d.Commit.Parents[0].String(), d.Commit.Hash.String(), app.DiffOptions{Patch: true})
		if err != nil {
			return err
		}
		patches = td.Patches
		d.Changes = td.Changes
	}
	return u.show(w, r, s, "commit", "Commit "+d.Commit.Hash.Short(), "history", map[string]any{"C": d.Commit, "Files": newDiffView(r, diffs(d.Changes, patches))})
}

// funcs are the templates' functions.
func funcs() template.FuncMap {
	return template.FuncMap{
		"pageURL": pageURL,
		"short":   func(h cairn.Hash) string { return h.Short() },
		"when": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"first": func(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l },
		"sev":   func(s lint.Severity) string { return string(s) },
		"list":  func(xs ...string) []string { return xs },
	}
}

// fmtValue writes a frontmatter value for people.
func fmtValue(v any) string {
	switch x := v.(type) {
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, fmtValue(e))
		}
		return strings.Join(parts, ", ")
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
