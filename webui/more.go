package webui

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"cairn"
	"cairn/app"
	"cairn/auth"
	"cairn/durable"
	"cairn/eva"
	"cairn/index"
	"cairn/ingest"
	"cairn/lint"
	"cairn/markdown"
)

// moreRoutes registers the views beyond reading and review: ingest (the
// sources, an upload, a job's live activity), ask, lint and health,
// comparing two revisions, and the settings.
func (u *UI) moreRoutes() {
	u.handle("GET /sources", auth.Read, u.sources)
	u.handle("POST /sources", auth.Propose, u.upload)
	u.handle("POST /sources/{ref}/retry", auth.Propose, u.retrySource)
	u.handle("GET /jobs/{id}", auth.Read, u.job)
	u.handle("GET /jobs/{id}/events", auth.Read, u.jobEvents)
	u.handle("POST /jobs/{id}/cancel", auth.Propose, u.cancelJob)
	u.handle("GET /ask", auth.Read, u.askForm)
	u.handle("POST /ask", auth.Read, u.ask)
	u.handle("POST /tool", auth.Read, u.tool)
	u.handle("GET /lint", auth.Read, u.lint)
	u.handle("POST /health", auth.Propose, u.health)
	u.handle("GET /compare", auth.Read, u.compare)
	u.handle("GET /settings", auth.Read, u.settings)
	u.handle("POST /settings", auth.Admin, u.setSetting)
	u.handle("GET /tokens", auth.Admin, u.tokens)
	u.handle("POST /tokens/{id}/revoke", auth.Admin, u.revokeToken)
}

// tokens lists the vault's tokens, an OAuth client's among them, for an
// admin to revoke, as the API does.
func (u *UI) tokens(w http.ResponseWriter, r *http.Request, s *session) error {
	toks, err := u.app.Tokens(r.Context())
	if err != nil {
		return err
	}
	return u.show(w, r, s, "tokens", "Tokens", "settings", map[string]any{"Tokens": toks, "Now": time.Now(), "Done": r.URL.Query().Get("done")})
}

// revokeToken revokes a token.
func (u *UI) revokeToken(w http.ResponseWriter, r *http.Request, s *session) error {
	t, err := u.app.RevokeToken(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/tokens?done="+url.QueryEscape(t.ID), http.StatusSeeOther)
	return nil
}

// sources shows the sources and the jobs, newest first, and the upload
// form.
func (u *UI) sources(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	l, err := u.app.Sources(ctx, app.SourceFilter{Limit: 100})
	if err != nil {
		return err
	}
	srcs := l.Sources
	jobs, err := u.app.Jobs(ctx, app.JobFilter{Limit: 30})
	if err != nil {
		return err
	}
	return u.show(w, r, s, "sources", "Ingest", "sources", map[string]any{
		"Sources": srcs, "Jobs": jobs, "Added": r.URL.Query()["added"], "MaxUpload": humanize.IBytes(uint64(u.maxUpload())),
	})
}

// maxUpload bounds one upload's request, all its files together.
func (u *UI) maxUpload() int64 {
	if u.opts.MaxUpload > 0 {
		return u.opts.MaxUpload
	}
	return DefaultMaxUpload
}

// upload stores the files of the form and queues them: the server's
// worker integrates them. It shows the sources, with what became of each
// file (a refused one says why).
func (u *UI) upload(w http.ResponseWriter, r *http.Request, s *session) error {
	if r.MultipartForm == nil {
		return cairn.Errorf(cairn.EINVALID, "no file was chosen").WithHint("Choose or drop one or more files, then send the form.")
	}
	defer r.MultipartForm.RemoveAll()
	var items []ingest.Data
	for _, fh := range r.MultipartForm.File["file"] {
		f, err := fh.Open()
		if err != nil {
			return fmt.Errorf("read the upload %s: %w", fh.Filename, err)
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("read the upload %s: %w", fh.Filename, err)
		}
		items = append(items, ingest.Data{Name: fh.Filename, Data: data})
	}
	if len(items) == 0 {
		return cairn.Errorf(cairn.EINVALID, "no file was chosen").WithHint("Choose or drop one or more files, then send the form.")
	}
	res, err := u.app.IngestData(r.Context(), items, app.IngestOptions{Detach: true})
	if err != nil {
		return err
	}
	var added []string
	for _, f := range res.Files {
		line := f.File
		if f.Source != nil {
			line += ": " + f.Source.Status
			if f.Source.Error != "" {
				line += " — " + f.Source.Error
			}
		}
		if f.Note != "" {
			line += " (" + f.Note + ")"
		}
		added = append(added, line)
	}
	q := make([]string, len(added))
	for i, a := range added {
		q[i] = "added=" + url.QueryEscape(a)
	}
	http.Redirect(w, r, "/sources?"+strings.Join(q, "&"), http.StatusSeeOther)
	return nil
}

// retrySource queues a failed or rejected source again.
func (u *UI) retrySource(w http.ResponseWriter, r *http.Request, s *session) error {
	src, err := u.app.RetrySource(r.Context(), r.PathValue("ref"))
	if err != nil {
		return err
	}
	if src.Job != 0 {
		http.Redirect(w, r, fmt.Sprintf("/jobs/%d", src.Job), http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, "/sources", http.StatusSeeOther)
	return nil
}

// jobID reads the {id} of the path.
func jobID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, cairn.Errorf(cairn.EINVALID, "%q is not a job's number", r.PathValue("id")).WithHint("Open a job from the ingest page.")
	}
	return id, nil
}

// eventLine is one line of a job's activity, as the job view and its
// stream show it.
type eventLine struct {
	ID   int64  `json:"id"`
	Time string `json:"time"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func lineOf(ev *app.Event) (eventLine, bool) {
	text := ev.Describe()
	if text == "" {
		return eventLine{}, false
	}
	return eventLine{ID: ev.ID, Time: ev.Time.UTC().Format(time.TimeOnly), Kind: strings.TrimPrefix(ev.Kind, "ingest."), Text: text}, true
}

// finished reports whether a job's state is final.
func finished(state string) bool {
	switch state {
	case durable.StateCompleted, durable.StateCancelled, durable.StateFailed:
		return true
	}
	return false
}

// job shows a job with its source's events under it; while it runs, the
// page streams the rest as they happen.
func (u *UI) job(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	j, err := u.app.Job(r.Context(), id)
	if err != nil {
		return err
	}
	var lines []eventLine
	var last int64
	for _, ev := range j.Events {
		last = max(last, ev.ID)
		if l, ok := lineOf(ev); ok {
			lines = append(lines, l)
		}
	}
	if last == 0 {
		// Nothing happened under it yet: stream from now on.
		if last, err = u.app.LastEvent(r.Context()); err != nil {
			return err
		}
	}
	return u.show(w, r, s, "job", fmt.Sprintf("Job %d", id), "sources", map[string]any{
		"J": j, "Lines": lines, "Live": !finished(j.State), "After": last,
	})
}

// streamPoll is how often a job's stream looks for new events.
const streamPoll = 250 * time.Millisecond

// streamLife bounds one stream: the browser's EventSource connects again.
const streamLife = 10 * time.Minute

// jobEvents streams a job's events after ?after= as server-sent events:
// "line" for each line of activity (JSON eventLine), then "done" once
// the job is finished.
func (u *UI) jobEvents(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		after, _ = strconv.ParseInt(id, 10, 64)
	}
	if after < 0 {
		after = 0
	}
	j, err := u.app.Job(r.Context(), id)
	if err != nil {
		return err
	}
	return u.stream(w, r, after,
		func(w io.Writer, ev *app.Event) {
			if ev.Fields().Job != id {
				return
			}
			if l, ok := lineOf(ev); ok {
				b, _ := json.Marshal(l)
				fmt.Fprintf(w, "id: %d\nevent: line\ndata: %s\n\n", ev.ID, b)
			}
		},
		func(w io.Writer) bool {
			if j, err = u.app.Job(r.Context(), id); err == nil && finished(j.State) {
				fmt.Fprintf(w, "event: done\ndata: %q\n\n", j.State)
				return true
			}
			return false
		})
}

// stream answers the vault's events after the one numbered after as
// server-sent events, read from the event table as they are recorded:
// send writes what an event says to this stream (or nothing); quiet,
// called when a read found nothing new, may write last words and end the
// stream (true). The stream ends too when the request is gone, after
// streamLife (the browser connects again), when the server stops, or when
// the session has ended (signed out, revoked, expired).
func (u *UI) stream(w http.ResponseWriter, r *http.Request, after int64, send func(io.Writer, *app.Event), quiet func(io.Writer) bool) error {
	ctx := r.Context()
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // the server's write timeout is for answers, not streams
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	end := time.NewTimer(streamLife)
	defer end.Stop()
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for {
		evs, err := u.app.Events(ctx, after, 500)
		if err != nil {
			return nil // the answer has begun: the browser connects again
		}
		for _, ev := range evs {
			after = ev.ID
			send(w, ev)
		}
		if len(evs) == 0 && quiet != nil && quiet(w) {
			rc.Flush()
			return nil
		}
		rc.Flush()
		select {
		case <-ctx.Done():
			return nil
		case <-end.C:
			return nil
		case <-u.opts.Done:
			return nil
		case <-tick.C:
		}
		if _, err := u.session(r); err != nil {
			return nil
		}
	}
}

// cancelJob cancels a job.
func (u *UI) cancelJob(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	if _, err := u.app.CancelJob(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/jobs/%d", id), http.StatusSeeOther)
	return nil
}

// askForm shows the question form, and the profile tools' form.
func (u *UI) askForm(w http.ResponseWriter, r *http.Request, s *session) error {
	return u.show(w, r, s, "ask", "Ask", "ask", map[string]any{"Tools": eva.Tools()})
}

// tool runs one of Eva's profile tools on main, as ask answers a
// question; with save, the result is proposed as an analysis page.
func (u *UI) tool(w http.ResponseWriter, r *http.Request, s *session) error {
	req := app.AskRequest{Tool: r.PostFormValue("tool"), Save: r.PostFormValue("save") != ""}
	req.Focus, req.Format = r.PostFormValue("focus"), r.PostFormValue("format")
	if c := strings.TrimSpace(r.PostFormValue("count")); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil {
			return cairn.Errorf(cairn.EINVALID, "the number %q is not a whole number", c).WithHint("Leave it empty for the tool's default.")
		}
		req.Count = n
	}
	ans, err := u.app.Ask(r.Context(), req)
	if err != nil {
		return err
	}
	body, err := u.renderAnswer(r, ans)
	if err != nil {
		return err
	}
	return u.show(w, r, s, "ask", "Ask", "ask", map[string]any{"A": ans, "Body": body, "Tools": eva.Tools(), "Tool": req.Tool, "Focus": req.Focus})
}

// ask answers a question from main, with its citations as links; with
// save, the answer is proposed as an analysis page, held for review.
func (u *UI) ask(w http.ResponseWriter, r *http.Request, s *session) error {
	req := app.AskRequest{Question: r.PostFormValue("q"), Save: r.PostFormValue("save") != ""}
	ans, err := u.app.Ask(r.Context(), req)
	if err != nil {
		return err
	}
	body, err := u.renderAnswer(r, ans)
	if err != nil {
		return err
	}
	return u.show(w, r, s, "ask", "Ask", "ask", map[string]any{"Q": req.Question, "A": ans, "Body": body, "Tools": eva.Tools()})
}

// renderAnswer renders an answer's Markdown as a page's is, its
// wikilinks resolved against the commit it was asked at.
func (u *UI) renderAnswer(r *http.Request, ans *app.Answer) (template.HTML, error) {
	src := []byte(ans.Answer)
	var infos []index.LinkInfo
	err := u.app.View(ans.Commit.String()).Read(r.Context(), func(snap *app.Snapshot) error {
		for _, l := range markdown.Parse("answer.md", src).Links {
			info := index.LinkInfo{Line: l.Line, Raw: l.Raw, Status: "broken"}
			if to, err := snap.Resolve(r.Context(), l.Target); err == nil {
				info.To, info.Status = to, "resolved"
			}
			infos = append(infos, info)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return u.render.Render("answer.md", src, infos, "")
}

// lintGroup is one page's findings.
type lintGroup struct {
	Page     string
	Findings []lint.Finding
}

// lintPart is the most findings the lint page shows at once.
const lintPart = 500

// lint shows main's lint findings grouped by page, a part at a time, with
// counts by rule, and the last health reports.
func (u *UI) lint(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	rule := r.URL.Query().Get("rule")
	from := 0
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return cairn.Errorf(cairn.EINVALID, "from=%q is not a place among the findings", v).WithHint("Follow the page's own links to the next findings.")
		}
		from = n
	}
	rep, err := u.app.Lint(ctx, app.LintOptions{Rule: rule, Offset: from, Limit: lintPart})
	if err != nil {
		return err
	}
	if from > 0 && from >= rep.Total {
		// A link to a part that is gone (findings were fixed since): the
		// first part.
		to := "/lint"
		if rule != "" {
			to += "?rule=" + url.QueryEscape(rule)
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return nil
	}
	var groups []lintGroup
	for _, f := range rep.Findings {
		if n := len(groups); n == 0 || groups[n-1].Page != f.Page {
			groups = append(groups, lintGroup{Page: f.Page})
		}
		groups[len(groups)-1].Findings = append(groups[len(groups)-1].Findings, f)
	}
	reports, err := u.app.HealthReports(ctx, 5)
	if err != nil {
		return err
	}
	data := map[string]any{
		"Groups": groups, "Rules": rep.Rules, "Total": rep.Total, "Rule": rule, "Reports": reports,
		"First": from + 1, "Last": from + len(rep.Findings), "Next": 0,
	}
	if end := from + len(rep.Findings); end < rep.Total && len(rep.Findings) > 0 {
		data["Next"] = end
	}
	return u.show(w, r, s, "lint", "Lint and health", "lint", data)
}

// health runs the vault's agent's health check of main and shows the
// reports, the new one first.
func (u *UI) health(w http.ResponseWriter, r *http.Request, s *session) error {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // the agent's own timeout bounds it
	if _, err := u.app.Health(r.Context()); err != nil {
		return err
	}
	http.Redirect(w, r, "/lint#health", http.StatusSeeOther)
	return nil
}

// compare shows the changes from one revision to another.
func (u *UI) compare(w http.ResponseWriter, r *http.Request, s *session) error {
	from, to := strings.TrimSpace(r.URL.Query().Get("from")), strings.TrimSpace(r.URL.Query().Get("to"))
	data := map[string]any{"From": from, "To": to}
	if from != "" || to != "" {
		if from == "" || to == "" {
			return cairn.Errorf(cairn.EINVALID, "comparing needs two revisions").WithHint("Name both: a branch, a tag or a commit in each field.")
		}
		d, err := u.app.Diff(r.Context(), from, to, app.DiffOptions{Patch: true})
		if err != nil {
			return err
		}
		data["Files"] = newDiffView(r, diffs(d.Changes, d.Patches))
		data["Compared"] = true
	}
	return u.show(w, r, s, "compare", "Compare", "history", data)
}

// settings shows cairn.yaml's settings with their values and defaults;
// an admin changes one as a commit through admission.
func (u *UI) settings(w http.ResponseWriter, r *http.Request, s *session) error {
	set, err := u.app.Settings(r.Context())
	if err != nil {
		return err
	}
	return u.show(w, r, s, "settings", "Settings", "settings", map[string]any{"Settings": set, "Done": r.URL.Query().Get("done")})
}

// setSetting changes one setting.
func (u *UI) setSetting(w http.ResponseWriter, r *http.Request, s *session) error {
	key := r.PostFormValue("key")
	ch, err := u.app.SetSetting(r.Context(), key, r.PostFormValue("value"))
	if err != nil {
		return err
	}
	done := key + " set"
	switch {
	case ch.Unchanged:
		done = key + " unchanged"
	case ch.Outcome != nil && !ch.Outcome.Admitted():
		done = fmt.Sprintf("%s: the change was %s", key, ch.Outcome.Verdict)
	}
	http.Redirect(w, r, "/settings?done="+url.QueryEscape(done), http.StatusSeeOther)
	return nil
}
