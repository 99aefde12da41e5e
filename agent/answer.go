package agent

import (
	"context"
	"encoding/json"
	"strings"

	"cairn"
)

// MaxQuestion is the longest question, in characters.
const MaxQuestion = 4000

// Question is a question asked of the vault, answered read-only.
type Question struct {
	// Text is the question.
	Text string
	// Base is the commit it is asked at: main's head.
	Base cairn.Hash
	// Scope, when set, is the working set: the paths of the only pages
	// the answer may read and cite (and the vault's index and rules).
	Scope []string
	// Activity, when set, receives what the agent does, as for a Task.
	Activity func(kind, text string)
}

// Reply is an agent's answer to a Question. Its citations are as the agent
// gave them: the application layer keeps those that resolve.
type Reply struct {
	// Answer is the answer, in Markdown.
	Answer string `json:"answer"`
	// Citations are the pages the answer rests on.
	Citations []Cited `json:"citations"`
	// Usage is what answering cost, when a model answered.
	Usage *Usage `json:"-"`
}

// Cited is a page an answer rests on, and the sources under raw/ the page
// rests on, as the agent named them.
type Cited struct {
	Page    string   `json:"page"`
	Sources []string `json:"sources,omitempty"`
}

// Answerer is a Runtime that can answer questions from the vault,
// read-only.
type Answerer interface {
	Runtime
	Answer(ctx context.Context, q *Question) (*Reply, error)
}

// ParseReply reads an agent's final text as a Reply: the whole text as
// JSON, else the JSON object from its first "{" to its last "}" (a
// fenced block or a preamble around it). ok is false when neither parses
// or the answer is empty.
func ParseReply(text string) (*Reply, bool) {
	text = strings.TrimSpace(text)
	var r Reply
	if json.Unmarshal([]byte(text), &r) != nil {
		i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
		if i < 0 || j <= i || json.Unmarshal([]byte(text[i:j+1]), &r) != nil {
			return nil, false
		}
	}
	if strings.TrimSpace(r.Answer) == "" {
		return nil, false
	}
	return &r, true
}
