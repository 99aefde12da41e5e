package extractive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cairn"
	"cairn/agent"
	"cairn/index"
	"cairn/lint"
)

// offlineTools are the profile tools the extractive runtime makes from
// the vault's passages; the others need a model's judgment.
var offlineTools = []string{"flashcards", "practice-exam", "evidence-map"}

// toolPages is how many pages an offline evidence map quotes.
const toolPages = 12

// passage is a page's key sentence: its first sentence of some length.
type passage struct {
	path, id, title string
	text            string
	sources         []string
}

// tool runs a profile tool offline: its cards, questions or map made of
// the key sentences of the pages the focus finds (the most linked pages
// without one), each citing its page. A tool that needs judgment (a
// reflection, a brief, a review) is refused, saying so.
func (x *Runtime) tool(ctx context.Context, q *agent.Question) (*agent.Reply, error) {
	if !slices.Contains(offlineTools, q.Tool) {
		return nil, cairn.Errorf(cairn.EINVALID, "the extractive agent cannot run %s offline: it weighs and judges, which needs a model; it runs %s", q.Tool, strings.Join(offlineTools, ", ")).
			WithHint("Run it with a model: cairn settings set agent.runtime llm (with agent.model), or claude, codex or opencode.")
	}
	want := cmp.Or(q.Count, toolPages)
	ps, err := x.passages(ctx, q, want)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return &agent.Reply{Answer: "The vault has no page with a sentence to make this from" + focusNote(q) + "."}, nil
	}
	reply := &agent.Reply{}
	for _, p := range ps {
		reply.Citations = append(reply.Citations, agent.Cited{Page: p.path, Sources: p.sources})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Made offline from the vault's own sentences%s (extractive agent, no model): each is quoted from the page it cites.", focusNote(q))
	if len(ps) < q.Count {
		fmt.Fprintf(&b, " The vault gave %d pages, not the %d asked for.", len(ps), q.Count)
	}
	b.WriteString("\n")
	link := func(p passage) string { return "[[" + p.id + "|" + p.title + "]]" }
	switch q.Tool {
	case "flashcards":
		for i, p := range ps {
			fmt.Fprintf(&b, "\n## Card %d\n\n**Prompt:** What does the vault say about %s?\n\n**Answer:** %s (%s)\n", i+1, p.title, p.text, link(p))
		}
	case "practice-exam":
		choices := len(ps) >= 4 && strings.Contains(q.Text, "multiple-choice")
		for i, p := range ps {
			if choices {
				fmt.Fprintf(&b, "\n## Question %d\n\nWhich subject does this passage describe?\n\n> %s\n\n", i+1, masked(p.text, p.title))
				for k, c := range options(ps, i) {
					fmt.Fprintf(&b, "%c. %s\n", 'A'+k, c)
				}
				continue
			}
			fmt.Fprintf(&b, "\n## Question %d\n\nExplain %s, and what the vault ties it to.\n", i+1, p.title)
		}
		b.WriteString("\n## Answer key\n")
		for i, p := range ps {
			fmt.Fprintf(&b, "\n%d. %s: %s (%s)\n", i+1, p.title, p.text, link(p))
		}
	case "evidence-map":
		b.WriteString("Weighing the evidence for and against each claim needs a model; here are the claims the pages make, with their sources.\n")
		for _, p := range ps {
			fmt.Fprintf(&b, "\n## %s\n\n> %s\n\n— %s", p.title, p.text, link(p))
			if len(p.sources) > 0 {
				fmt.Fprintf(&b, ", from %s", strings.Join(p.sources, ", "))
			}
			b.WriteString("\n")
		}
	}
	reply.Answer = b.String()
	return reply, nil
}

func focusNote(q *agent.Question) string {
	if q.Focus == "" {
		return ""
	}
	return fmt.Sprintf(" on %q", q.Focus)
}

// masked is a sentence with its subject's words hidden, for a question.
func masked(text, title string) string {
	for _, w := range strings.Fields(title) {
		if len([]rune(w)) < 3 {
			continue
		}
		text = strings.ReplaceAll(text, w, "…")
		text = strings.ReplaceAll(text, strings.ToLower(w), "…")
	}
	return text
}

// options are four titles, the right one (ps[i]) among the next three
// pages', in an order the position i decides.
func options(ps []passage, i int) []string {
	out := []string{ps[i].title}
	for k := 1; len(out) < 4; k++ {
		out = append(out, ps[(i+k)%len(ps)].title)
	}
	r := i % 4
	out[0], out[r] = out[r], out[0]
	return out
}

// passages returns the key sentences of up to n pages: those the focus's
// words find, best first, or the most linked pages without a focus;
// within the working set when there is one.
func (x *Runtime) passages(ctx context.Context, q *agent.Question, n int) ([]passage, error) {
	r := x.Index.Main()
	var paths []string
	if q.Focus != "" {
		hits, err := x.retrieve(ctx, q.Focus, q.Scope, 2*n) // some are no page to quote
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
	} else {
		ts, err := r.Titles(ctx)
		if err != nil {
			return nil, fmt.Errorf("extractive tool: %w", err)
		}
		slices.SortStableFunc(ts, func(a, b index.Title) int { return b.Inbound - a.Inbound })
		for _, t := range ts {
			paths = append(paths, t.Path)
		}
	}
	scope := map[string]bool{}
	for _, p := range q.Scope {
		scope[p] = true
	}
	c, err := x.Store.ReadCommit(ctx, q.Base)
	if err != nil {
		return nil, fmt.Errorf("extractive tool: %w", err)
	}
	var out []passage
	for _, path := range paths {
		if len(out) >= n {
			break
		}
		if _, decl := lint.TypeDeclaration(path); decl || strings.EqualFold(path, "index.md") || q.Scope != nil && !scope[path] {
			continue
		}
		p, err := r.Page(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("extractive tool: %w", err)
		}
		if p.Kind != "page" || p.Type == "index" {
			continue
		}
		e, err := x.Store.Get(ctx, c.Tree, path)
		if err != nil {
			return nil, fmt.Errorf("extractive tool: %w", err)
		}
		data, err := x.Store.ReadBlob(ctx, e.Blob)
		if err != nil && !errors.Is(err, cairn.ErrPurged) {
			return nil, fmt.Errorf("extractive tool: %w", err)
		}
		text := keySentence(data)
		if text == "" {
			continue
		}
		var sources []string
		for _, s := range p.Sources {
			if strings.HasPrefix(s, "raw/") {
				sources = append(sources, s)
			}
		}
		out = append(out, passage{path: path, id: strings.TrimSuffix(path, ".md"), title: exLabel(cmp.Or(p.Title, path)), text: text, sources: sources})
	}
	return out, nil
}

// keySentence is a page's first sentence of at least six words, outside
// headings, as plain text; "" when it has none.
func keySentence(data []byte) string {
	for _, b := range exBlocks(data) {
		if b.heading {
			continue
		}
		for _, s := range trSentences(b.text) {
			s = exClean(exInline(s))
			if len(strings.Fields(s)) >= 6 {
				return exShorten(s, exMaxPassageRunes)
			}
		}
	}
	return ""
}
