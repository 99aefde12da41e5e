package admit_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"cairn"
	"cairn/admit"
)

// policies are the examples of docs/admission.md (Policies).
const policies = `policies:
  - name: big-agent-change
    expression: origin == 'agent' && diff.pages > 20
    verdict: hold
    message: an agent's change of more than 20 pages waits for a person
  - name: summary-source
    expression: files.exists(f, f.type == 'summary' && f.kind != 'deleted' && size(f.missing_sources) > 0)
    verdict: reject
    message: a summary's source must be in the vault, added in the same change or before
  - name: decisions-by-people
    expression: origin != 'person' && files.exists(f, f.type == 'decision' || f.type_before == 'decision')
    verdict: hold
    message: decisions are changed by people; an agent's change to one is held
`

// policyGates returns the policy findings of an outcome as gate/rule verdict.
func policyGates(out *admit.Outcome) []string {
	var gs []string
	for _, f := range out.Findings {
		if f.Gate == admit.GatePolicy {
			gs = append(gs, fmt.Sprintf("%s %s", f.Rule, f.Verdict))
		}
	}
	slices.Sort(gs)
	return gs
}

func TestSubmit_Policies(t *testing.T) {
	e := setup(t)
	agent, person := cairn.Agent("extractive"), cairn.User("ada")
	if out := e.submit(person, map[string]string{"cairn.yaml": policies}, nil); !out.Admitted() {
		t.Fatalf("policies not admitted: %s %v", out.Verdict, out.Findings)
	}
	pages := func(n int) map[string]string {
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("---\ntitle: N%d\ntype: note\n---\n# N%d\n", i, i)
		}
		return files
	}
	summary := func(source string) map[string]string {
		return map[string]string{"summaries/s.md": "---\ntitle: S\ntype: summary\nsource: " + source + "\n---\n# S\n\nSee [[concepts/a|A]].\n"}
	}
	for _, tc := range []struct {
		name  string
		who   cairn.Principal
		files map[string]string
		want  []string
	}{
		{"TwentyPagesPass", agent, pages(20), nil},
		{"TwentyOnePagesHeld", agent, pages(21), []string{"big-agent-change hold"}},
		{"APersonMayChangeMany", person, pages(25), nil},
		{"SummaryOfAMissingSource", agent, summary("raw/nowhere.md"), []string{"summary-source reject"}},
		{"SummaryOfAStoredSource", agent, summary("raw/source.md"), nil},
		{"SummaryWithItsSource", person, func() map[string]string {
			f := summary("raw/new.md")
			f["raw/new.md"] = "new source\n"
			return f
		}(), nil},
		{"AgentDecision", agent, map[string]string{"decisions/d.md": "---\ntitle: D\ntype: decision\n---\n# D\n"}, []string{"decisions-by-people hold"}},
		{"PersonDecision", person, map[string]string{"decisions/d.md": "---\ntitle: D\ntype: decision\n---\n# D\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.try(tc.who, tc.files, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := policyGates(out); !slices.Equal(got, tc.want) {
				t.Errorf("policy findings = %v, want %v (all: %v)", got, tc.want, out.Findings)
			}
			if len(tc.want) > 0 && out.Verdict == cairn.Admit {
				t.Errorf("verdict admit, want the policy's")
			}
		})
	}
	// A person's change of a decision once it exists is admitted; an
	// agent's deletion of it is held (the type before counts).
	e.submit(person, map[string]string{"decisions/d.md": "---\ntitle: D\ntype: decision\n---\n# D\n\nSee [[concepts/a|A]].\n"}, nil)
	out, err := e.try(agent, map[string]string{"decisions/d.md": ""}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := policyGates(out); !slices.Equal(got, []string{"decisions-by-people hold"}) {
		t.Errorf("an agent's deletion of a decision: policy findings %v", got)
	}
}

func TestSubmit_PolicyFailsClosed(t *testing.T) {
	e := setup(t)
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	yaml := "policies:\n" +
		"  - name: expensive\n    expression: \"" + strings.Repeat(ten+".all(a, ", 6) + "true" + strings.Repeat(")", 6) + "\"\n    verdict: admit\n    message: never\n" +
		"  - name: missing-key\n    expression: files.exists(f, f.frontmatter.status == 'x')\n    verdict: admit\n    message: never\n"
	if out := e.submit(cairn.User("ada"), map[string]string{"cairn.yaml": yaml}, nil); !out.Admitted() {
		t.Fatalf("policies not admitted: %s %v", out.Verdict, out.Findings)
	}
	out, err := e.try(cairn.User("ada"), map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. Edited.\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != cairn.Hold {
		t.Errorf("verdict %s, want hold: a policy that cannot be evaluated holds the change", out.Verdict)
	}
	msgs := map[string]string{}
	for _, f := range out.Findings {
		if f.Gate == admit.GatePolicy {
			msgs[f.Rule] = f.Message
		}
	}
	if !strings.Contains(msgs["expensive"], "cost limit") {
		t.Errorf("expensive policy: %q, want a cost limit error", msgs["expensive"])
	}
	if !strings.Contains(msgs["missing-key"], "no such key") {
		t.Errorf("missing-key policy: %q, want the missing key", msgs["missing-key"])
	}
	// cairn's own changes are never held by a policy.
	if out := e.submit(cairn.PrincipalSystem, map[string]string{"raw/other.md": "x\n"}, nil); !out.Admitted() {
		t.Errorf("a system change: %s %v", out.Verdict, out.Findings)
	}
}

func TestParsePolicy_BadPolicies(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"Undeclared", "policies:\n  - name: p\n    expression: filez.size() > 1\n    verdict: hold\n    message: m\n", "policies[0] (p, line 2): the expression does not compile:\nERROR: <input>:1:1: undeclared reference to 'filez'"},
		{"NotBool", "policies:\n  - name: p\n    expression: size(files)\n    verdict: hold\n    message: m\n", "is of type int; it must be a bool"},
		{"Syntax", "policies:\n  - name: p\n    expression: origin == \n    verdict: hold\n    message: m\n", "Syntax error"},
		{"BadVerdict", "policies:\n  - name: p\n    expression: 'true'\n    verdict: maybe\n    message: m\n", `the verdict "maybe" is not admit, hold or reject`},
		{"NoMessage", "policies:\n  - name: p\n    expression: 'true'\n    verdict: hold\n", "needs a message"},
		{"BadName", "policies:\n  - name: Big Change\n    expression: 'true'\n    verdict: hold\n    message: m\n", "must be lower-case letters"},
		{"Twice", "policies:\n  - {name: p, expression: 'true', verdict: hold, message: m}\n  - {name: p, expression: 'false', verdict: hold, message: m}\n", "the name p is used twice"},
		{"UnknownKey", "policies:\n  - name: p\n    expresion: 'true'\n    verdict: hold\n    message: m\n", "expresion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := admit.ParsePolicy([]byte(tc.yaml))
			if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParsePolicy = %v, want EINVALID with %q", err, tc.want)
			}
		})
	}
}
