package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"cairn"
	"cairn/agent"
	"cairn/auth"
	"cairn/eva"
)

// AskRequest is a question asked of the vault.
type AskRequest struct {
	// Question is the question; empty for a tool run.
	Question string `json:"question,omitempty"`
	// Save keeps the answer as an analysis page, proposed and always held
	// for a person's review (needs a principal; the scope propose).
	Save bool `json:"save,omitempty"`
	// Scope, when set, is a working set: the pages (ids, paths or
	// titles; at most MaxScope) the answer may read and cite, with the
	// vault's index and rules. The agent's view keeps to it.
	Scope []string `json:"scope,omitempty"`
	// Tool, when set, runs one of Eva's profile tools (eva.Tools) instead
	// of answering Question, with its options.
	Tool string `json:"tool,omitempty"`
	eva.ToolOptions
}

// Citation is a page an answer rests on, as it is at the commit asked,
// with the sources under raw/ it rests on (those the page names and the
// commit holds).
type Citation struct {
	Page    string   `json:"page"` // its path
	Title   string   `json:"title,omitempty"`
	Sources []string `json:"sources"`
}

// Answer is the vault's answer to a question.
type Answer struct {
	// Question is the question asked, or the tool run with its focus.
	Question string `json:"question"`
	// Tool is the profile tool run, when one was.
	Tool      string     `json:"tool,omitempty"`
	Answer    string     `json:"answer"`
	Citations []Citation `json:"citations"`
	// Dropped counts the citations the agent gave that name no page at
	// the commit asked: they are left out.
	Dropped int `json:"dropped"`
	// Commit is main's head, where the question was asked.
	Commit cairn.Hash `json:"commit"`
	// Agent is the runtime that answered.
	Agent string `json:"agent"`
	// Usage is what answering cost, when a model answered.
	Usage *agent.Usage `json:"usage,omitempty"`
	// Saved is the analysis page the answer was saved as (Save), and
	// Proposal the held proposal that adds it.
	Saved    string `json:"saved,omitempty"`
	Proposal int64  `json:"proposal,omitempty"`
}

// Ask answers a question from the vault, read-only, with the vault's
// agent as main's head configures it: the extractive runtime by retrieval
// (offline, no key), the built-in agent (llm) through its model and
// cairn's read tools, an agent CLI (claude, codex, opencode) run
// read-only in a workspace of main (of the working set only, when one is
// named). Each citation is checked against main's head: a page that is not
// there (or not in the working set) is dropped and counted; its sources
// are the raw files the page names that the commit holds. A question that
// is empty or over agent.MaxQuestion characters is EINVALID, as is a
// runtime that cannot answer (the generic command runtime); an agent's own
// failure (a refused key, a limit reached) is EUNAVAILABLE with its reason.
func (a *App) Ask(ctx context.Context, req AskRequest) (*Answer, error) {
	if t := auth.FromContext(ctx); req.Save && t != nil && !t.Has(auth.Propose) {
		return nil, cairn.Errorf(cairn.EFORBIDDEN, "saving an answer proposes a page: it needs the scope propose").
			WithHint("Ask without saving, or with a token that has the scope propose.")
	}
	q := strings.TrimSpace(req.Question)
	var tool *eva.Tool
	if req.Tool != "" {
		t, opts, err := toolOf(req)
		if err != nil {
			return nil, err
		}
		tool, req.ToolOptions, q = &t, opts, t.Label
		if opts.Focus != "" {
			q += ": " + opts.Focus
		}
	}
	switch n := utf8.RuneCountInString(q); {
	case n == 0:
		return nil, cairn.Errorf(cairn.EINVALID, "the question is empty").
			WithHint(`Ask something: cairn ask "who printed the first book in English?"`)
	case n > agent.MaxQuestion:
		return nil, cairn.Errorf(cairn.EINVALID, "the question has %d characters; at most %d are asked", n, agent.MaxQuestion).
			WithHint("Ask a shorter question; put long material in a source and ingest it.")
	}
	rt, head, err := a.ingest.Agent(ctx)
	if err != nil {
		return nil, err
	}
	scope, err := a.scopeOf(ctx, head, req.Scope)
	if err != nil {
		return nil, err
	}
	ans, ok := rt.(agent.Answerer)
	if !ok {
		return nil, cairn.Errorf(cairn.EINVALID, "the %s agent cannot answer questions yet", rt.Name()).
			WithHint("Ask with an agent that answers: extractive (offline), llm (with agent.model), claude, codex or opencode: cairn settings set agent.runtime NAME")
	}
	question := &agent.Question{Text: q, Base: head, Scope: scope}
	if tool != nil {
		profile, err := a.profileLabel(ctx, head)
		if err != nil {
			return nil, err
		}
		question.Text = tool.Prompt(req.ToolOptions, profile)
		question.Tool, question.Focus, question.Count = tool.ID, req.Focus, req.Count
	}
	reply, err := ans.Answer(ctx, question)
	if err != nil {
		return nil, agentError(ctx, rt, "answer", err)
	}
	out := &Answer{Question: q, Tool: req.Tool, Answer: strings.TrimSpace(reply.Answer), Citations: []Citation{}, Commit: head, Agent: rt.Name(), Usage: reply.Usage}
	view := a.View(head.String())
	if scope != nil {
		view = view.Scoped(scope)
	}
	err = view.Read(ctx, func(s *Snapshot) error {
		seen := map[string]bool{}
		for _, c := range reply.Citations {
			path, err := s.Resolve(ctx, c.Page)
			if err != nil {
				if code := cairn.ErrorCode(err); code == cairn.ENOTFOUND || code == cairn.EINVALID || code == cairn.ECONFLICT {
					out.Dropped++
					continue
				}
				return err
			}
			if seen[path] {
				continue
			}
			seen[path] = true
			p, err := s.Page(ctx, path)
			if err != nil {
				return err
			}
			cit := Citation{Page: path, Title: p.Title, Sources: []string{}}
			for _, src := range slices.Concat(p.Sources, c.Sources) {
				if !strings.HasPrefix(src, "raw/") || slices.Contains(cit.Sources, src) {
					continue
				}
				if _, err := s.ReadFile(ctx, src); err == nil {
					cit.Sources = append(cit.Sources, src)
				}
			}
			out.Citations = append(out.Citations, cit)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if req.Save {
		if err := a.saveAnswer(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toolOf returns the profile tool a request runs, with its options
// checked as Eva checks them.
func toolOf(req AskRequest) (eva.Tool, eva.ToolOptions, error) {
	t, ok := eva.LookupTool(req.Tool)
	if !ok {
		return t, req.ToolOptions, cairn.Errorf(cairn.EINVALID, "%q is not a tool; the tools are %s", req.Tool, strings.Join(eva.ToolIDs(), ", ")).
			WithHint("Try: cairn tool flashcards --focus 'paper making'")
	}
	if strings.TrimSpace(req.Question) != "" {
		return t, req.ToolOptions, cairn.Errorf(cairn.EINVALID, "a tool run takes options, not a question").
			WithHint("Narrow it with a focus instead.")
	}
	opts, err := t.Normalize(req.ToolOptions)
	return t, opts, err
}

// profileLabel names the vault for a tool's prompt: its Eva profile's
// label ("Research"), or "cairn" for a vault that is no Eva brain.
func (a *App) profileLabel(ctx context.Context, head cairn.Hash) (string, error) {
	f, err := a.ReadFile(ctx, head.String(), eva.ManifestFile)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return "cairn", nil
	case err != nil:
		return "", err
	}
	m, err := eva.ParseManifest([]byte(f.Content))
	if err != nil {
		return "cairn", nil // judged when it was committed; the name is all that is read
	}
	p, _ := eva.Lookup(m.Profile)
	return p.Label + " brain", nil
}

// agentError is the error of an agent that could not do what (answer,
// check the vault): its own failure, or the infrastructure's, as
// EUNAVAILABLE with its reason; a cairn error (bad settings) as it is.
func agentError(ctx context.Context, rt agent.Runtime, what string, err error) error {
	if f, ok := agent.IsFailure(err); ok {
		return cairn.Errorf(cairn.EUNAVAILABLE, "the %s agent could not %s: %s", rt.Name(), what, f.Message).
			WithHint("Try again, or check the agent's settings: cairn settings")
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ce *cairn.Error
	if errors.As(err, &ce) {
		return err
	}
	return cairn.Errorf(cairn.EUNAVAILABLE, "the %s agent could not %s: %w", rt.Name(), what, err).WithHint("Try again later.")
}

// scopeOf resolves a working set's pages on the commit head: their paths,
// each once; nil for none. More than MaxScope pages, or one that names no
// page, is EINVALID naming them.
func (a *App) scopeOf(ctx context.Context, head cairn.Hash, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if len(refs) > MaxScope {
		return nil, cairn.Errorf(cairn.EINVALID, "the working set names %d pages; it may hold at most %d", len(refs), MaxScope).
			WithHint("Name fewer pages, or ask the whole vault.")
	}
	var paths, missing []string
	err := a.View(head.String()).Read(ctx, func(s *Snapshot) error {
		for _, ref := range refs {
			ref = strings.TrimSpace(ref)
			if ref == "" || strings.ContainsFunc(ref, unicode.IsControl) || len(ref) > 512 {
				missing = append(missing, strconv.Quote(ref))
				continue
			}
			p, err := s.Resolve(ctx, ref)
			switch code := cairn.ErrorCode(err); {
			case err == nil:
				if !slices.Contains(paths, p) {
					paths = append(paths, p)
				}
			case code == cairn.ENOTFOUND || code == cairn.EINVALID || code == cairn.ECONFLICT:
				missing = append(missing, cairn.Quote(ref))
			default:
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 5)]
		more := ""
		if len(missing) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
		}
		return nil, cairn.Errorf(cairn.EINVALID, "the working set names pages main does not have: %s%s", strings.Join(shown, ", "), more).
			WithHint("Name pages by id, path or title; cairn search finds them.")
	}
	return paths, nil
}

// saveAnswer proposes the answer as an analysis page,
// analyses/<date>-<slug>.md, held for a person whatever the gates say (as
// Eva does): the question, the answer, and the evidence as links.
func (a *App) saveAnswer(ctx context.Context, ans *Answer) error {
	if _, err := Principal(ctx); err != nil {
		return err
	}
	date := a.now().Format("2006-01-02")
	title := ans.Question
	if r := []rune(title); len(r) > 120 {
		title = string(r[:119]) + "…"
	}
	var sources []string
	var evidence strings.Builder
	for _, c := range ans.Citations {
		fmt.Fprintf(&evidence, "- [[%s|%s]]", strings.TrimSuffix(c.Page, ".md"), cmp.Or(c.Title, c.Page))
		if len(c.Sources) > 0 {
			fmt.Fprintf(&evidence, " (from %s)", strings.Join(c.Sources, ", "))
		}
		evidence.WriteByte('\n')
		for _, s := range c.Sources {
			if !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
	}
	fm, err := yaml.Marshal(struct {
		Title    string   `yaml:"title"`
		Type     string   `yaml:"type"`
		Date     string   `yaml:"date"`
		Question string   `yaml:"question"`
		Agent    string   `yaml:"agent"`
		Sources  []string `yaml:"sources,omitempty"`
	}{title, "analysis", date, ans.Question, ans.Agent, sources})
	if err != nil {
		return err
	}
	body := "---\n" + string(fm) + "---\n\n# " + strings.ReplaceAll(title, "\n", " ") + "\n\n" + ans.Answer + "\n"
	if evidence.Len() > 0 {
		body += "\n## Evidence\n\n" + evidence.String()
	}
	slug := slugOf(ans.Question)
	tree, err := a.TreeOf(ctx, ans.Commit)
	if err != nil {
		return err
	}
	path := ""
	for n := 1; path == ""; n++ {
		p := fmt.Sprintf("analyses/%s-%s.md", date, slug)
		if n > 1 {
			p = fmt.Sprintf("analyses/%s-%s-%d.md", date, slug, n)
		}
		if _, err := a.v.Store.GetFold(ctx, tree, p); cairn.ErrorCode(err) == cairn.ENOTFOUND {
			path = p
		} else if err != nil {
			return err
		}
	}
	res, err := a.Write(ctx, WriteRequest{Propose: true, Message: "analysis: " + clipRunes(ans.Question, 60),
		Writes: []PageWrite{{Path: path, Content: []byte(body)}}})
	if err != nil {
		return err
	}
	ans.Saved = path
	if o := res.Admission; o != nil && o.Proposal != nil {
		ans.Proposal = o.Proposal.ID
	}
	return nil
}

// slugOf is a question's words as a file name: lower-case letters and
// digits joined by "-", at most 60 bytes; "question" when it has none.
func slugOf(q string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(q) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return cmp.Or(strings.Trim(b.String(), "-"), "question")
}

// clipRunes cuts s to n characters, with "…".
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
