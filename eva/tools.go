package eva

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"cairn"
)

// Tool is one of Eva's seven profile tools: a read-only view of the brain
// a profile's work calls for, made by the vault's agent from the brain's
// own pages, which any brain may run.
type Tool struct {
	ID, Label string
	// Origin is the profile the tool was made for.
	Origin string
	// Instruction is what the agent makes.
	Instruction string
	// Formats are the formats the tool takes, the default first; none
	// for a tool without formats.
	Formats []string
	// MinCount, MaxCount and DefaultCount bound how many items (cards,
	// questions) the tool makes; 0 for a tool without a count.
	MinCount, MaxCount, DefaultCount int
	// Noun names a counted item: "flashcards", "questions".
	Noun string
}

// MaxFocus is the longest focus, in characters.
const MaxFocus = 400

var tools = []Tool{
	{ID: "personal-review", Label: "Reflection", Origin: "personal",
		Instruction: "Write a gentle reflection grounded in the brain's record: the patterns that recur, what moved recently, and the questions worth coming back to. Do not diagnose, prescribe or add context the pages do not give."},
	{ID: "evidence-map", Label: "Evidence map", Origin: "research",
		Instruction: "Map the evidence: the central claims, the evidence for and against each, how confident the record allows one to be and where it stops, and the next question to ask. Keep each claim apart from its interpretation."},
	{ID: "reading-threads", Label: "Threads map", Origin: "reading",
		Instruction: "Map the characters, events and themes onto the plot's threads. Say which connections the pages support directly, and mark the threads still open without predicting anything beyond what has been read."},
	{ID: "decision-brief", Label: "Decision brief", Origin: "business",
		Instruction: "Write a brief of the current decision: the evidence, the options, the owners, the risks and assumptions, and the open questions. Never state an agreement or an ownership the pages do not establish."},
	{ID: "options-review", Label: "Options review", Origin: "planning",
		Instruction: "Compare the options against the objectives and the constraints: the trade-offs of each, and what information is missing. End with a frame for the decision."},
	{ID: "flashcards", Label: "Flashcards", Origin: "course",
		Instruction: "Make flashcards for study, each a heading '## Card N' then a line '**Prompt:** …' and a line '**Answer:** …', on definitions, relationships, examples and the confusions learners often have.",
		MinCount:    6, MaxCount: 30, DefaultCount: 15, Noun: "flashcards"},
	{ID: "practice-exam", Label: "Practice exam", Origin: "course",
		Instruction: "Write a practice exam mixing recall, explanation and application, then a section '## Answer key' whose answers rest on the pages.",
		Formats:     []string{"mixed", "multiple-choice", "written", "short-answer"},
		MinCount:    4, MaxCount: 20, DefaultCount: 8, Noun: "questions"},
}

// formatNames are how the prompt names a practice exam's formats.
var formatNames = map[string]string{"mixed": "mixed question set", "multiple-choice": "multiple-choice questions",
	"written": "written responses", "short-answer": "short-answer questions"}

// Tools returns the seven tools, in Eva's order.
func Tools() []Tool { return slices.Clone(tools) }

// LookupTool returns the tool with the given id.
func LookupTool(id string) (Tool, bool) {
	i := slices.IndexFunc(tools, func(t Tool) bool { return t.ID == id })
	if i < 0 {
		return Tool{}, false
	}
	return tools[i], true
}

// ToolIDs returns the tools' ids.
func ToolIDs() []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.ID
	}
	return out
}

// ToolOptions are what a person asks of a tool run.
type ToolOptions struct {
	// Focus narrows the tool to a subject, at most MaxFocus characters.
	Focus string `json:"focus,omitempty"`
	// Format is a practice exam's format; "" for the default.
	Format string `json:"format,omitempty"`
	// Count is how many flashcards or questions; 0 for the default.
	Count int `json:"count,omitempty"`
}

// Normalize checks options as Eva does and fills the defaults: a focus of
// at most MaxFocus characters; a format only for a tool with formats, one
// of them; a count only for a tool with a count, within its bounds.
func (t Tool) Normalize(o ToolOptions) (ToolOptions, error) {
	bad := func(format string, args ...any) *cairn.Error {
		return cairn.Errorf(cairn.EINVALID, "%s: "+format, append([]any{t.ID}, args...)...).
			WithHint("cairn tool lists the tools and their options.")
	}
	o.Focus = strings.Join(strings.Fields(o.Focus), " ")
	if n := utf8.RuneCountInString(o.Focus); n > MaxFocus {
		return o, bad("the focus has %d characters; at most %d", n, MaxFocus)
	}
	switch {
	case len(t.Formats) == 0 && o.Format != "":
		return o, bad("takes no format").WithHint("Only practice-exam takes --format.")
	case len(t.Formats) > 0 && o.Format == "":
		o.Format = t.Formats[0]
	case len(t.Formats) > 0 && !slices.Contains(t.Formats, o.Format):
		return o, bad("the format %q is not one of %s", o.Format, strings.Join(t.Formats, ", "))
	}
	switch {
	case t.MaxCount == 0 && o.Count != 0:
		return o, bad("takes no count").WithHint("Only flashcards and practice-exam take --count.")
	case t.MaxCount > 0 && o.Count == 0:
		o.Count = t.DefaultCount
	case t.MaxCount > 0 && (o.Count < t.MinCount || o.Count > t.MaxCount):
		return o, bad("makes %d to %d %s, not %d", t.MinCount, t.MaxCount, t.Noun, o.Count)
	}
	return o, nil
}

// Prompt is what the vault's agent is asked for a run of the tool with
// (normalized) options, in a brain of the profile labelled profile.
func (t Tool) Prompt(o ToolOptions, profile string) string {
	origin, _ := Lookup(t.Origin)
	var b strings.Builder
	fmt.Fprintf(&b, "Run the %s tool in this %s knowledge base. It was made for %s brains; use this vault's own record, read-only.\n\n",
		t.Label, profile, strings.ToLower(origin.Label))
	b.WriteString("Read EVA.md or AGENTS.md and index.md if they exist, then search and read the pages the task needs. Use only the vault's evidence; where the record is too thin, say what is missing.\n\n")
	b.WriteString(t.Instruction + "\n\n")
	switch {
	case o.Focus == "" && o.Format == "" && o.Count == 0:
		b.WriteString("No further customization was asked for.\n")
	default:
		if o.Focus != "" {
			fmt.Fprintf(&b, "Focus only on: %s\n", o.Focus)
		}
		if o.Format != "" {
			fmt.Fprintf(&b, "Exam format: %s\n", formatNames[o.Format])
		}
		if o.Count != 0 {
			fmt.Fprintf(&b, "Number of %s: %d\n", t.Noun, o.Count)
		}
		b.WriteString("Apply these where the evidence allows; never widen the subject or change the format or the number.\n")
	}
	b.WriteString("\nCite the pages the result rests on.")
	return b.String()
}
