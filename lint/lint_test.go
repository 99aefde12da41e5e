package lint_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/lint"
	"cairn/markdown"
)

func ids(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+" "+string(f.Severity)+" "+f.Subject)
	}
	return out
}

func TestCheck(t *testing.T) {
	page := func(path, src string) *lint.Facts {
		return &lint.Facts{Path: path, Kind: lint.Classify(path), Page: markdown.Parse(path, []byte(src)), Inbound: 1, Reachable: true}
	}
	for _, tc := range []struct {
		name  string
		facts *lint.Facts
		cfg   *lint.Config
		want  []string
	}{
		{"PlainObsidianPage", page("notes/a.md", "# A\ntext"), nil, []string{"missing-title info title", "missing-type info type"}},
		{"ContractVault", page("notes/a.md", "# A\ntext"), &lint.Config{Contract: true}, []string{"missing-title warning title", "missing-type warning type"}},
		{"Complete", page("notes/a.md", "---\ntitle: A\ntype: concept\n---\n"), nil, nil},
		{"SummaryWithoutSource", page("summaries/s.md", "---\ntitle: S\ntype: summary\n---\n"), nil, []string{"missing-source warning source"}},
		{"SummaryWithBadSource", page("summaries/s.md", "---\ntitle: S\ntype: summary\nsource: papers/x.pdf\n---\n"), nil, []string{"invalid-source warning papers/x.pdf"}},
		{"Misplaced", page("private/var/folders/x.md", "---\ntitle: X\ntype: concept\n---\n"), nil, []string{"misplaced-page error private/var/folders/x.md"}},
		{"MisplacedScript", &lint.Facts{Path: "tmp/run.sh", Kind: lint.KindAttachment}, nil, []string{"misplaced-page error tmp/run.sh", "non-markdown-file warning "}},
		{"TopLevelTmpIsFine", page("tmp.md", "---\ntitle: T\ntype: concept\n---\n"), nil, nil},
		{"MalformedYAML", page("a.md", "---\ntitle: [unclosed\n---\nbody"), nil, []string{"malformed-frontmatter error frontmatter", "missing-title info title", "missing-type info type"}},
		{"InvalidEncoding", page("a.md", "---\ntitle: A\ntype: t\n---\nbad \xff byte"), nil, []string{"invalid-encoding error "}},
		{"ImageOutsideAttachments", &lint.Facts{Path: "notes/pic.png", Kind: lint.KindAttachment}, nil, []string{"non-markdown-file info "}},
		{"ImageInAttachments", &lint.Facts{Path: "notes/attachments/pic.png", Kind: lint.KindAttachment}, nil, nil},
		{"RawSource", &lint.Facts{Path: "raw/paper.pdf", Kind: lint.KindSource}, nil, nil},
		{"Hidden", &lint.Facts{Path: ".obsidian/app.json", Kind: lint.KindHidden}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(lint.Check(tc.facts, tc.cfg))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck_Graph(t *testing.T) {
	p := markdown.Parse("a.md", []byte("---\ntitle: A\ntype: concept\naliases: [Shared]\nsources: raw/x.md\n---\n[[gone]] [[two]] [[b#Nope]] [[three]]"))
	res := []markdown.Resolution{
		{Status: markdown.StatusBroken},
		{Status: markdown.StatusAmbiguous, Candidates: []string{"x/two.md", "y/two.md"}},
		{Status: markdown.StatusResolved, Path: "b.md", MissingHeading: true},
		{Status: markdown.StatusResolved, Path: "x/three.md", Candidates: []string{"x/three.md", "yy/three.md"}},
	}
	f := &lint.Facts{Path: "a.md", Kind: lint.KindPage, Page: p, HasIndex: true,
		TitleClashes: []lint.Clash{{Value: "Shared", With: []string{"c.md"}}}, IDClashes: []string{"A.md"}, MissingSources: []string{"raw/x.md"}}
	for i, l := range p.Links {
		f.Links = append(f.Links, lint.Link{Link: l, Res: res[i]})
	}
	got := ids(lint.Check(f, nil))
	want := []string{
		"ambiguous-link info three", "ambiguous-link warning two", "broken-link warning gone", "case-collision error a",
		"duplicate-title warning Shared", "missing-heading warning b#Nope", "orphan warning ", "source-not-found warning raw/x.md",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check mismatch (-want +got):\n%s", diff)
	}
	// Linked but not reachable from index.md.
	f.Inbound = 2
	if got := ids(lint.Check(f, nil)); !slices.Contains(got, "unreachable warning ") || slices.Contains(got, "orphan warning ") {
		t.Errorf("unreachable page: %v", got)
	}
}

func TestNew(t *testing.T) {
	f := func(rule, page, subject, msg string) lint.Finding {
		return lint.Finding{Rule: rule, Severity: lint.Warning, Page: page, Subject: subject, Message: msg}
	}
	base := []lint.Finding{f("broken-link", "a.md", "x", "old wording"), f("orphan", "b.md", "", "")}
	change := []lint.Finding{
		f("broken-link", "a.md", "x", "new wording"), // same identity: not new
		f("broken-link", "a.md", "x", ""),            // a second occurrence: new
		f("orphan", "c.md", "", ""),
	}
	got := lint.New(base, change)
	if len(got) != 2 || got[0].Subject != "x" || got[1].Page != "c.md" {
		t.Errorf("New = %+v", got)
	}
	if lint.Finding.ID(change[0]) != lint.Finding.ID(change[1]) {
		t.Errorf("ID depends on the message")
	}
	if n := len(lint.AtLeast([]lint.Finding{{Severity: lint.Info}, {Severity: lint.Error}}, lint.Warning)); n != 1 {
		t.Errorf("AtLeast(warning) kept %d", n)
	}
}

// TestCheck_ManyClashes: a title and an id that many pages share name the
// first ten of the others and count the rest.
func TestCheck_ManyClashes(t *testing.T) {
	var others []string
	for i := range 1500 {
		others = append(others, fmt.Sprintf("d%04d/m.md", i))
	}
	p := markdown.Parse("a/m.md", []byte("---\ntitle: Meeting notes\nid: same\n---\n"))
	f := &lint.Facts{Path: p.Path, Kind: lint.KindPage, Page: p, Inbound: 1,
		TitleClashes: []lint.Clash{{Value: "Meeting notes", With: others}}, IDClashes: others}
	var n int
	for _, fd := range lint.Check(f, nil) {
		if fd.Rule != lint.DuplicateTitle && fd.Rule != lint.CaseCollision {
			continue
		}
		n++
		if !strings.Contains(fd.Message, "d0009/m.md and 1490 more") || strings.Contains(fd.Message, "d0010/") {
			t.Errorf("%s: %q, want d0000–d0009 and 1490 more", fd.Rule, fd.Message)
		}
	}
	if n != 2 {
		t.Errorf("%d clash findings, want 2", n)
	}
}

// TestClassify_AsBefore checks Classify against the way it lower-cased
// every path before (kept here as the oracle), on paths whose case or
// Unicode letters could tell the two apart.
func TestClassify_AsBefore(t *testing.T) {
	contract := []string{"cairn.yaml", "eva.json", "eva.md", "agents.md", "claude.md", "log.md"}
	before := func(p string) lint.Kind {
		for _, seg := range strings.Split(p, "/") {
			if strings.HasPrefix(seg, ".") {
				return lint.KindHidden
			}
		}
		lower := strings.ToLower(p)
		switch {
		case strings.HasPrefix(lower, "raw/"):
			return lint.KindSource
		case slices.Contains(contract, lower):
			return lint.KindContract
		case strings.HasSuffix(lower, ".md"):
			return lint.KindPage
		}
		return lint.KindAttachment
	}
	for _, p := range []string{"a.md", "A.MD", "notes/x.Md", "RAW/p.pdf", "Raw/x.md", "raw", "ra/w.md", "raw/",
		"CAIRN.yaml", "Eva.JSON", "Log.md", "x/log.md", "ca\u0130rn.yaml", "eva.j\u017fon", "\u212aey.md",
		".obsidian/a.json", "a/.git/x", "a/b.c/d.md", "a.mD", "\u00e9.md", "\u00c9T\u00c9.MD", "r\u0101w/x.md", "img.png", "",
		"md", ".md", "x.md.png", "\u0130.md", "agents.MD", "claude.md/x"} {
		if got, want := lint.Classify(p), before(p); got != want {
			t.Errorf("Classify(%q) = %v, want %v", p, got, want)
		}
	}
}
