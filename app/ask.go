package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"cairn"
	"cairn/agent"
)

// AskRequest is a question asked of the vault.
type AskRequest struct {
	Question string `json:"question"`
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
	Question  string     `json:"question"`
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
}

// Ask answers a question from the vault, read-only, with the vault's
// agent as main's head configures it: the extractive runtime by retrieval
// (offline, no key), the built-in agent (llm) through its model and
// cairn's read tools. Each citation is checked against main's head: a page
// that is not there is dropped and counted; its sources are the raw files
// the page names that the commit holds. A question that is empty or over
// agent.MaxQuestion characters is EINVALID, as is a runtime that cannot
// answer (the agent CLIs, so far); an agent's own failure (a refused key,
// a limit reached) is EUNAVAILABLE with its reason.
func (a *App) Ask(ctx context.Context, req AskRequest) (*Answer, error) {
	q := strings.TrimSpace(req.Question)
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
	ans, ok := rt.(agent.Answerer)
	if !ok {
		return nil, cairn.Errorf(cairn.EINVALID, "the %s agent cannot answer questions yet", rt.Name()).
			WithHint("Ask with the built-in agent (cairn settings set agent.runtime llm, with agent.model) or offline by retrieval (agent.runtime extractive).")
	}
	reply, err := ans.Answer(ctx, &agent.Question{Text: q, Base: head})
	if err != nil {
		if f, ok := agent.IsFailure(err); ok {
			return nil, cairn.Errorf(cairn.EUNAVAILABLE, "the %s agent could not answer: %s", rt.Name(), f.Message).
				WithHint("Try again, or check the agent's settings: cairn settings")
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ce *cairn.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, cairn.Errorf(cairn.EUNAVAILABLE, "the %s agent could not answer: %w", rt.Name(), err).
			WithHint("Try again later.")
	}
	out := &Answer{Question: q, Answer: strings.TrimSpace(reply.Answer), Citations: []Citation{}, Commit: head, Agent: rt.Name(), Usage: reply.Usage}
	err = a.View(head.String()).Read(ctx, func(s *Snapshot) error {
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
	return out, nil
}
