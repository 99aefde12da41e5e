package eva_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn"
	"cairn/agent"
	"cairn/eva"
	"cairn/schema"
)

func TestParseManifest(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"Minimal", `{"format":"eva-brain","version":1}`, ""},
		{"Profile", `{"format":"eva-brain","version":1,"profile":"reading"}`, ""},
		{"Modules", `{"format":"eva-brain","version":1,"profile":"business","modules":["projects","decisions","meetings","risks"]}`, ""},
		{"Version2", `{"format":"eva-brain","version":2}`, "uses version 2 of the standard"},
		{"NoFormat", `{"version":1}`, `the format is "", not "eva-brain"`},
		{"UnknownProfile", `{"format":"eva-brain","version":1,"profile":"cooking"}`, `the profile "cooking" is not one of personal, research`},
		{"ModulesOutOfOrder", `{"format":"eva-brain","version":1,"profile":"business","modules":["decisions","projects","meetings","risks"]}`, "are not the business profile's"},
		{"NotJSON", `format: eva-brain`, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := eva.ParseManifest([]byte(tc.data))
			if tc.want == "" {
				if err != nil || m.Profile == "" {
					t.Fatalf("ParseManifest = %+v, %v", m, err)
				}
				return
			}
			if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "eva.json: ") || cairn.ErrorHint(err) == "" {
				t.Fatalf("ParseManifest = %v, want EINVALID naming eva.json with %q and a hint", err, tc.want)
			}
		})
	}
}

// TestFiles checks every profile's brain: a manifest Eva accepts, the
// profile's settings in EVA.md as Eva reads them, types that compile, and
// an index that lists the starter page and every type.
func TestFiles(t *testing.T) {
	if got := eva.IDs(); !slices.Equal(got, []string{"personal", "research", "reading", "business", "planning", "course", "blank"}) {
		t.Fatalf("profiles %v", got)
	}
	for _, p := range eva.Profiles() {
		t.Run(p.ID, func(t *testing.T) {
			files := eva.Files(p, eva.Settings{Language: "Deutsch", Runtime: "codex", Purpose: "Keep track."}, "2026-12-02")
			m, err := eva.ParseManifest(files["eva.json"])
			if err != nil || m.Profile != p.ID || !slices.Equal(m.Modules, p.Modules) {
				t.Fatalf("eva.json %s: %+v %v", files["eva.json"], m, err)
			}
			set := agent.ParseEva(files["EVA.md"])
			if set.Runtime != "codex" || set.Language != "Deutsch" || set.Focus != p.IngestGuidance {
				t.Errorf("EVA.md's settings as read: %+v", set)
			}
			var decls []schema.Declaration
			for path, data := range files {
				if strings.HasPrefix(path, "types/") {
					decls = append(decls, schema.Declaration{Path: path, Data: data})
				}
			}
			types := schema.Load(decls)
			if types.Len() != len(p.AllTypes()) {
				t.Errorf("%d types declared, want %d", types.Len(), len(p.AllTypes()))
			}
			for _, ty := range types.Types() {
				if ty.Broken {
					t.Errorf("type %s: %v", ty.Name, ty.Problems())
				}
				if !strings.Contains(string(files["index.md"]), "[[types/"+ty.Name+"|") {
					t.Errorf("index.md does not list type %s", ty.Name)
				}
			}
			if !strings.Contains(string(files["index.md"]), "- [[analyses/starting-point]] — "+p.Starter) {
				t.Errorf("index.md:\n%s", files["index.md"])
			}
			for _, sec := range p.Sections {
				if !strings.Contains(string(files["analyses/starting-point.md"]), "\n## "+sec+"\n") {
					t.Errorf("the starter page lacks the section %s", sec)
				}
			}
		})
	}
}

func TestBootstrap(t *testing.T) {
	dir := t.TempDir()
	// A file of the person's is never overwritten.
	if err := os.WriteFile(filepath.Join(dir, "index.md"), []byte("# Mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := eva.Lookup("research")
	wrote, err := eva.Bootstrap(dir, p, eva.Settings{}, "2026-12-02")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(wrote, "index.md") || !slices.Contains(wrote, "eva.json") {
		t.Errorf("wrote %v", wrote)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "index.md")); string(data) != "# Mine\n" {
		t.Errorf("index.md overwritten: %q", data)
	}
	for _, f := range eva.Folders {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.IsDir() {
			t.Errorf("folder %s: %v", f, err)
		}
	}
	// A brain already: refused, nothing written.
	if _, err := eva.Bootstrap(dir, p, eva.Settings{}, "2026-12-02"); cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), "is an Eva brain already") {
		t.Errorf("Bootstrap of a brain = %v", err)
	}
	if _, err := eva.Bootstrap(t.TempDir(), p, eva.Settings{Purpose: strings.Repeat("x", 241)}, "2026-12-02"); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("a purpose of 241 characters: %v", err)
	}
	if _, err := eva.Bootstrap(t.TempDir(), p, eva.Settings{Runtime: "gemini"}, "2026-12-02"); cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), "not claude, codex or opencode") {
		t.Errorf("an unknown runtime: %v", err)
	}
	if files := eva.Files(p, eva.Settings{Runtime: "opencode"}, "2026-12-02"); agent.ParseEva(files["EVA.md"]).Runtime != "opencode" ||
		!strings.Contains(string(files["EVA.md"]), "- **Agent runtime:** OpenCode (local)") {
		t.Errorf("--runtime opencode: EVA.md says\n%s", files["EVA.md"])
	}
}

func TestTools(t *testing.T) {
	if got := eva.ToolIDs(); !slices.Equal(got, []string{"personal-review", "evidence-map", "reading-threads", "decision-brief", "options-review", "flashcards", "practice-exam"}) {
		t.Fatalf("tools %v", got)
	}
	for _, tc := range []struct {
		tool string
		in   eva.ToolOptions
		want eva.ToolOptions
		err  string
	}{
		{"flashcards", eva.ToolOptions{}, eva.ToolOptions{Count: 15}, ""},
		{"flashcards", eva.ToolOptions{Count: 30, Focus: "  ink \n and  paper "}, eva.ToolOptions{Count: 30, Focus: "ink and paper"}, ""},
		{"flashcards", eva.ToolOptions{Count: 5}, eva.ToolOptions{}, "makes 6 to 30 flashcards, not 5"},
		{"flashcards", eva.ToolOptions{Format: "written"}, eva.ToolOptions{}, "takes no format"},
		{"practice-exam", eva.ToolOptions{}, eva.ToolOptions{Format: "mixed", Count: 8}, ""},
		{"practice-exam", eva.ToolOptions{Format: "short-answer", Count: 4}, eva.ToolOptions{Format: "short-answer", Count: 4}, ""},
		{"practice-exam", eva.ToolOptions{Count: 21}, eva.ToolOptions{}, "makes 4 to 20 questions, not 21"},
		{"practice-exam", eva.ToolOptions{Format: "oral"}, eva.ToolOptions{}, `the format "oral" is not one of mixed, multiple-choice, written, short-answer`},
		{"decision-brief", eva.ToolOptions{Count: 3}, eva.ToolOptions{}, "takes no count"},
		{"evidence-map", eva.ToolOptions{Focus: strings.Repeat("é", 401)}, eva.ToolOptions{}, "the focus has 401 characters; at most 400"},
	} {
		tool, _ := eva.LookupTool(tc.tool)
		got, err := tool.Normalize(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s %+v: %+v %v, want %+v", tc.tool, tc.in, got, err, tc.want)
		case tc.err != "" && (cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), tc.err) || cairn.ErrorHint(err) == ""):
			t.Errorf("%s %+v: %v, want EINVALID with %q and a hint", tc.tool, tc.in, err, tc.err)
		}
	}
	exam, _ := eva.LookupTool("practice-exam")
	p := exam.Prompt(eva.ToolOptions{Focus: "ink", Format: "written", Count: 6}, "Course and learning brain")
	for _, want := range []string{"Run the Practice exam tool in this Course and learning brain", "made for course and learning brains", "## Answer key",
		"Focus only on: ink", "Exam format: written responses", "Number of questions: 6", "never widen the subject"} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
}
