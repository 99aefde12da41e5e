package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cairn/internal/llmtest"
)

// TestTool runs Eva's profile tools with the real binary: offline with
// the extractive agent where the tool allows it (and a clear refusal
// where it does not), through the built-in agent with the tool's prompt,
// and saved as an analysis held for review.
func TestTool(t *testing.T) {
	dir := sampleVault(t)
	list := run(t, dir, nil, "tool")
	if list.code != 0 || strings.Count(list.stdout, "\n") != 7 || !strings.Contains(list.stdout, "practice-exam") {
		t.Errorf("cairn tool:\n%s%s", list.stdout, list.stderr)
	}
	r := run(t, dir, nil, "--json", "tool", "flashcards", "--count", "6", "--focus", "printing")
	var ans struct {
		Question, Tool, Answer, Agent string
		Citations                     []struct{ Page string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
		t.Fatalf("cairn tool flashcards: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if ans.Question != "Flashcards: printing" || ans.Agent != "extractive" || strings.Count(ans.Answer, "## Card ") != len(ans.Citations) || len(ans.Citations) == 0 {
		t.Errorf("flashcards: %+v", ans)
	}
	exam := run(t, dir, nil, "tool", "practice-exam", "--format", "multiple-choice", "--count", "4")
	if exam.code != 0 || !strings.Contains(exam.stdout, "## Answer key") || !strings.Contains(exam.stdout, "A. ") {
		t.Errorf("practice exam: exit %d\n%s%s", exam.code, exam.stdout, exam.stderr)
	}
	ev := run(t, dir, nil, "tool", "evidence-map", "--focus", "paper")
	if ev.code != 0 || !strings.Contains(ev.stdout, "needs a model") || !strings.Contains(ev.stdout, "from raw/") {
		t.Errorf("evidence map: exit %d\n%s%s", ev.code, ev.stdout, ev.stderr)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"tool", "decision-brief"}, "cannot run decision-brief offline"},
		{[]string{"tool", "flashcards", "--count", "3"}, "makes 6 to 30 flashcards, not 3"},
		{[]string{"tool", "flashcards", "--format", "written"}, "takes no format"},
		{[]string{"tool", "practice-exam", "--format", "oral"}, `the format "oral" is not one of`},
		{[]string{"tool", "evidence-map", "--focus", strings.Repeat("x", 401)}, "at most 400"},
		{[]string{"tool", "horoscope"}, `"horoscope" is not a tool`},
	} {
		if r := run(t, dir, nil, bad.args...); r.code != 2 || !strings.Contains(r.stderr, bad.want) || !strings.Contains(r.stderr, "Hint: ") {
			t.Errorf("cairn %s: exit %d, want 2 with %q and a hint:\n%s", strings.Join(bad.args, " "), r.code, bad.want, r.stderr)
		}
	}
	// Saved: an analysis held for review.
	r = run(t, dir, nil, "--json", "tool", "flashcards", "--save")
	var saved struct {
		Saved    string
		Proposal int64
	}
	if err := json.Unmarshal([]byte(r.stdout), &saved); err != nil || r.code != 0 || !strings.HasSuffix(saved.Saved, "-flashcards.md") || saved.Proposal == 0 {
		t.Fatalf("cairn tool --save: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, saved.Saved)); err == nil {
		t.Errorf("the analysis is on main, not held")
	}
	if show := run(t, dir, nil, "review", "show", strconv.FormatInt(saved.Proposal, 10)); !strings.Contains(show.stdout, "+question: Flashcards") || !strings.Contains(show.stdout, "held") {
		t.Errorf("review show:\n%s", show.stdout)
	}

	// Through a model: the tool's prompt, with its options, is what the
	// built-in agent is asked.
	srv := llmtest.Anthropic(t, llmtest.Script{
		{Text: `{"answer": "## Decision\n\nAdopt oil-based ink [[concepts/printing-ink]].", "citations": [{"page": "concepts/printing-ink.md"}]}`},
	})
	env := []string{"CAIRN_TEST_KEY=sk-test"}
	for _, kv := range [][2]string{{"agent.model", "test-model"}, {"agent.base_url", srv.URL}, {"agent.key_env", "CAIRN_TEST_KEY"}, {"agent.runtime", "llm"}} {
		must(t, run(t, dir, env, "settings", "set", kv[0], kv[1]), "settings set", kv[0])
	}
	r = run(t, dir, env, "tool", "decision-brief", "--focus", "which ink to use")
	if r.code != 0 || !strings.Contains(r.stdout, "Adopt oil-based ink") || !strings.Contains(r.stdout, "concepts/printing-ink.md") {
		t.Fatalf("decision brief through the model: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	prompt := srv.Main()[0].Prompt
	for _, want := range []string{"Run the Decision brief tool", "made for business record brains", "Focus only on: which ink to use", "Never state an agreement"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the model was not asked %q:\n%s", want, prompt)
		}
	}
}
