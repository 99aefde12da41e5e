package markdown_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"cairn/markdown"

	"github.com/google/go-cmp/cmp"
)

// testVault is a small vault exercising every resolution step.
var testVault = map[string]string{
	"index.md":                "---\ntitle: Home\n---\n",
	"concepts/attention.md":   "---\ntitle: Attention Mechanism\naliases: [Attention, self-attention]\n---\n",
	"concepts/transformer.md": "# Transformer\n\n## Architecture\n\nSix layers. ^arch\n",
	"people/vaswani.md":       "",
	"a/sub/note.md":           "",
	"b/sub/note.md":           "",
	"dup/readme.md":           "",
	"other/readme.md":         "",
	"titled.md":               "---\ntitle: Shared Title\n---\n",
	"titled2.md":              "# Shared Title\n",
	"ided.md":                 "---\nid: custom-id\n---\n",
	"topics/network.md":       "",
	"other.md":                "---\ntitle: network\naliases: [Home]\n---\n",
	"x.md":                    "---\naliases: [Common]\n---\n",
	"y.md":                    "---\naliases: Common, Rare\n---\n",
	"café.md":                 "",
}

var testAttachments = []string{"img/diagram.png", "raw/paper.pdf", "raw/other/paper.pdf", "index.md"}

func setup(t *testing.T) (*markdown.Resolver, map[string]*markdown.Page) {
	t.Helper()
	pages := make(map[string]*markdown.Page)
	var list []*markdown.Page
	for path, src := range testVault {
		p := markdown.Parse(path, []byte(src))
		pages[path] = p
		list = append(list, p)
	}
	return markdown.NewResolver(list, testAttachments), pages
}

// linkIn parses src as the body of page from and returns its only link.
func linkIn(t *testing.T, from, src string) markdown.Link {
	t.Helper()
	p := markdown.Parse(from, []byte(src))
	if len(p.Links) != 1 {
		t.Fatalf("Parse(%q) has %d links, want 1", src, len(p.Links))
	}
	return p.Links[0]
}

func TestResolver_Resolve(t *testing.T) {
	t.Parallel()
	r, pages := setup(t)
	resolved := func(path string, step markdown.Step) markdown.Resolution {
		return markdown.Resolution{Status: markdown.StatusResolved, Path: path, Step: step}
	}
	ambiguous := func(step markdown.Step, paths ...string) markdown.Resolution {
		return markdown.Resolution{Status: markdown.StatusAmbiguous, Step: step, Candidates: paths}
	}
	shortest := func(step markdown.Step, path string, among ...string) markdown.Resolution {
		return markdown.Resolution{Status: markdown.StatusResolved, Path: path, Step: step, Candidates: among}
	}
	broken := markdown.Resolution{Status: markdown.StatusBroken}
	from := "concepts/transformer.md"
	tests := []struct {
		name string
		link string
		want markdown.Resolution
	}{
		{"Stem", "[[attention]]", resolved("concepts/attention.md", markdown.StepStem)},
		{"StemBeatsAlias", "[[Attention]]", resolved("concepts/attention.md", markdown.StepStem)},
		{"Alias", "[[Self-Attention]]", resolved("concepts/attention.md", markdown.StepAlias)},
		{"Title", "[[attention mechanism]]", resolved("concepts/attention.md", markdown.StepTitle)},
		{"TitleFromHeading", "[[TRANSFORMER]]", resolved("concepts/transformer.md", markdown.StepStem)},
		{"Path", "[[concepts/attention]]", resolved("concepts/attention.md", markdown.StepPath)},
		{"PathWithExtension", "[[Concepts/Attention.md]]", resolved("concepts/attention.md", markdown.StepPath)},
		{"FrontmatterID", "[[custom-id]]", resolved("ided.md", markdown.StepPath)},
		{"PathBesideID", "[[ided]]", resolved("ided.md", markdown.StepPath)},
		{"Suffix", "[[a/sub/note]]", resolved("a/sub/note.md", markdown.StepPath)},
		{"SuffixShortestTie", "[[sub/note]]", shortest(markdown.StepSuffix, "a/sub/note.md", "a/sub/note.md", "b/sub/note.md")},
		{"SuffixWholeSegments", "[[ub/note]]", broken},
		{"StemShortest", "[[README]]", shortest(markdown.StepStem, "dup/readme.md", "dup/readme.md", "other/readme.md")},
		{"TitleAmbiguous", "[[shared title]]", ambiguous(markdown.StepTitle, "titled.md", "titled2.md")},
		{"StemBeatsTitle", "[[network]]", resolved("topics/network.md", markdown.StepStem)},
		{"TitleBeatsAlias", "[[home]]", resolved("index.md", markdown.StepTitle)},
		{"AliasAmbiguous", "[[common]]", ambiguous(markdown.StepAlias, "x.md", "y.md")},
		{"AliasFromCommaString", "[[Rare]]", resolved("y.md", markdown.StepAlias)},
		{"Broken", "[[missing]]", broken},
		{"UnicodeFold", "[[CAFÉ]]", resolved("café.md", markdown.StepPath)},
		{"UnicodeNFC", "[[cafe\u0301]]", resolved("café.md", markdown.StepPath)},
		{"AttachmentStem", "![[diagram.png]]", resolved("img/diagram.png", markdown.StepStem)},
		{"AttachmentPath", "[[raw/paper.pdf]]", resolved("raw/paper.pdf", markdown.StepPath)},
		{"AttachmentSuffix", "[[other/paper.pdf]]", resolved("raw/other/paper.pdf", markdown.StepSuffix)},
		{"AttachmentShortest", "[[paper.pdf]]", shortest(markdown.StepStem, "raw/paper.pdf", "raw/other/paper.pdf", "raw/paper.pdf")},
		{"AttachmentFragmentUnchecked", "![[raw/paper.pdf#page=3]]", resolved("raw/paper.pdf", markdown.StepPath)},
		{"AttachmentNeedsExtension", "[[diagram]]", broken},
		{"RelativeWikilink", "[[../people/vaswani]]", resolved("people/vaswani.md", markdown.StepFile)},
		{"RootedWikilink", "[[/index]]", resolved("index.md", markdown.StepFile)},
		{"RelativeWikilinkNoFallback", "[[./vaswani]]", broken},
		{"Heading", "[[Transformer#architecture]]", resolved(from, markdown.StepStem)},
		{"HeadingSlug", "[t](transformer.md#architecture)", resolved(from, markdown.StepFile)},
		{"Block", "[[transformer#^ARCH]]", resolved(from, markdown.StepStem)},
		{"MarkdownRelative", "[a](attention.md)", resolved("concepts/attention.md", markdown.StepFile)},
		{"MarkdownParent", "[a](../index.md)", resolved("index.md", markdown.StepFile)},
		{"MarkdownRooted", "[a](/index.md)", resolved("index.md", markdown.StepFile)},
		{"MarkdownWithoutExtension", "[a](attention)", resolved("concepts/attention.md", markdown.StepFile)},
		{"MarkdownVaultPathFallback", "[a](concepts/attention.md)", resolved("concepts/attention.md", markdown.StepPath)},
		{"MarkdownNameFallback", "[a](Vaswani.md)", resolved("people/vaswani.md", markdown.StepStem)},
		{"MarkdownDotRelativeNoFallback", "[a](./vaswani.md)", broken},
		{"MarkdownNoTitles", "[a](Attention%20Mechanism.md)", broken},
		{"MarkdownAttachment", "![d](../img/diagram.png)", resolved("img/diagram.png", markdown.StepFile)},
		{"MarkdownEscaping", "[a](../../x.md)", broken},
		{"FrontmatterLink", "---\nup: \"[[Home]]\"\n---\n", resolved("index.md", markdown.StepTitle)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := linkIn(t, from, tc.link)
			got := r.Resolve(pages[from], l)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve(%q) mismatch (-want +got):\n%s", tc.link, diff)
			}
		})
	}
}

// TestResolver_SameName: where several files share a name, a link goes
// where Obsidian sends it (observed on Obsidian 1.13.7 with
// getFirstLinkpathDest): an exact vault path, else a match in the linking
// page's own folder (not an ancestor's), else the shortest path string,
// the first in byte order among equally short ones.
func TestResolver_SameName(t *testing.T) {
	t.Parallel()
	resolved := func(path string, step markdown.Step, among ...string) markdown.Resolution {
		return markdown.Resolution{Status: markdown.StatusResolved, Path: path, Step: step, Candidates: among}
	}
	vaults := []struct {
		name  string
		files []string
		tests []struct {
			from, link string
			want       markdown.Resolution
		}
	}{
		{"RootPresent", []string{"Note.md", "zzzz/Note.md", "a/b/Note.md", "b/Note.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			{"src-root.md", "[[Note]]", resolved("Note.md", markdown.StepPath)},
			{"zzzz/src.md", "[[Note]]", resolved("Note.md", markdown.StepPath)},
			{"a/b/src.md", "[[Note]]", resolved("Note.md", markdown.StepPath)},
			{"a/b/src.md", "[[b/Note]]", resolved("b/Note.md", markdown.StepPath)},
		}},
		{"RootDeleted", []string{"zzzz/Note.md", "a/b/Note.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			{"zzzz/src.md", "[[Note]]", resolved("zzzz/Note.md", markdown.StepStem)},
			{"a/b/src.md", "[[Note]]", resolved("a/b/Note.md", markdown.StepStem)},
			{"src-root.md", "[[Note]]", resolved("a/b/Note.md", markdown.StepStem, "a/b/Note.md", "zzzz/Note.md")},
			{"src-root.md", "[a](Note.md)", resolved("a/b/Note.md", markdown.StepStem, "a/b/Note.md", "zzzz/Note.md")},
		}},
		{"MoreCandidates", []string{"zzzz/Note.md", "a/b/Note.md", "b/Note.md", "aaaaaaaa/Note.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			{"zzzz/deep/src.md", "[[Note]]", resolved("b/Note.md", markdown.StepStem, "a/b/Note.md", "aaaaaaaa/Note.md", "b/Note.md", "zzzz/Note.md")},
			{"src-root.md", "[[Note]]", resolved("b/Note.md", markdown.StepStem, "a/b/Note.md", "aaaaaaaa/Note.md", "b/Note.md", "zzzz/Note.md")},
			{"zzzz/src.md", "[[Note]]", resolved("zzzz/Note.md", markdown.StepStem)},
		}},
		{"Suffix", []string{"a/b/Note.md", "x/b/Note.md", "y/b/Note.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			{"x/b/src.md", "[[b/Note]]", resolved("x/b/Note.md", markdown.StepSuffix)},
			{"src.md", "[[b/Note]]", resolved("a/b/Note.md", markdown.StepSuffix, "a/b/Note.md", "x/b/Note.md", "y/b/Note.md")},
		}},
		{"ObsidianHelp", []string{"Obsidian Sync/Security and privacy.md", "Obsidian Publish/Security and privacy.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			{"Obsidian Sync/Headless Sync.md", "[[Security and privacy]]", resolved("Obsidian Sync/Security and privacy.md", markdown.StepStem)},
			{"Obsidian Publish/Custom domains.md", "[[Security and privacy#Data]]", resolved("Obsidian Publish/Security and privacy.md", markdown.StepStem)},
		}},
		{"TieInBytesNotInUTF16", []string{"ab/x.md", "é/x.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			// Obsidian counts UTF-16 code units: "é/x.md" is 6, "ab/x.md" 7.
			{"src.md", "[[x]]", resolved("é/x.md", markdown.StepStem, "ab/x.md", "é/x.md")},
		}},
		{"TitlesStayAmbiguous", []string{"one.md", "two/one.md"}, []struct {
			from, link string
			want       markdown.Resolution
		}{
			{"src.md", "[[Shared]]", markdown.Resolution{Status: markdown.StatusAmbiguous, Step: markdown.StepTitle, Candidates: []string{"one.md", "two/one.md"}}},
		}},
	}
	for _, v := range vaults {
		t.Run(v.name, func(t *testing.T) {
			var pages []*markdown.Page
			for _, f := range v.files {
				pages = append(pages, markdown.Parse(f, []byte("---\ntitle: Shared\n---\n")))
			}
			r := markdown.NewResolver(pages, nil)
			for _, tc := range v.tests {
				from := markdown.Parse(tc.from, []byte(tc.link))
				got := r.Resolve(from, from.Links[0])
				got.MissingHeading = false
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Resolve(%q) from %s mismatch (-want +got):\n%s", tc.link, tc.from, diff)
				}
			}
		})
	}
}

func TestResolver_Fragments(t *testing.T) {
	t.Parallel()
	r, pages := setup(t)
	from := pages["concepts/transformer.md"]
	tests := []struct {
		name                     string
		link                     string
		samePage                 bool
		missingHeading, missingB bool
	}{
		{"HeadingFound", "[[transformer#Architecture]]", false, false, false},
		{"ChainedHeading", "[[transformer#Transformer#Architecture]]", false, false, false},
		{"HeadingMissing", "[[transformer#Training]]", false, true, false},
		{"BlockMissing", "[[transformer#^nope]]", false, false, true},
		{"SamePageFound", "[[#architecture]]", true, false, false},
		{"SamePageMissing", "[[#Nope]]", true, true, false},
		{"SamePageBlock", "[[#^arch]]", true, false, false},
		{"MarkdownSamePage", "[a](#architecture)", true, false, false},
		{"MarkdownSamePageMissing", "[a](#nope)", true, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Resolve(from, linkIn(t, from.Path, tc.link))
			if got.Status != markdown.StatusResolved || got.Path != from.Path ||
				got.SamePage != tc.samePage || got.MissingHeading != tc.missingHeading || got.MissingBlock != tc.missingB {
				t.Errorf("Resolve(%q) = %+v, want resolved to %s, SamePage %v, MissingHeading %v, MissingBlock %v",
					tc.link, got, from.Path, tc.samePage, tc.missingHeading, tc.missingB)
			}
		})
	}
	if got := r.Resolve(nil, linkIn(t, "a.md", "[[#x]]")); got.Status != markdown.StatusBroken {
		t.Errorf("Resolve(nil, [[#x]]) = %+v, want broken", got)
	}
}

func TestResolutionKeys(t *testing.T) {
	t.Parallel()
	p := markdown.Parse("Notes/Sub/Deep Note.md", []byte("---\nid: N-1\naliases: [Alpha, alpha, Beta]\n---\n# The Title\n"))
	want := []markdown.Key{
		{Step: markdown.StepFile, Value: "notes/sub/deep note.md"},
		{Step: markdown.StepPath, Value: "n-1"},
		{Step: markdown.StepPath, Value: "notes/sub/deep note"},
		{Step: markdown.StepSuffix, Value: "sub/deep note"},
		{Step: markdown.StepStem, Value: "deep note"},
		{Step: markdown.StepTitle, Value: "the title"},
		{Step: markdown.StepAlias, Value: "alpha"},
		{Step: markdown.StepAlias, Value: "beta"},
	}
	if diff := cmp.Diff(want, markdown.ResolutionKeys(p)); diff != "" {
		t.Errorf("ResolutionKeys mismatch (-want +got):\n%s", diff)
	}
	wantA := []markdown.Key{
		{Step: markdown.StepFile, Value: "raw/x/paper.pdf"},
		{Step: markdown.StepPath, Value: "raw/x/paper.pdf"},
		{Step: markdown.StepSuffix, Value: "x/paper.pdf"},
		{Step: markdown.StepStem, Value: "paper.pdf"},
	}
	if diff := cmp.Diff(wantA, markdown.AttachmentKeys("Raw/X/Paper.PDF")); diff != "" {
		t.Errorf("AttachmentKeys mismatch (-want +got):\n%s", diff)
	}
	// A title from the file name adds no key: the stem has it.
	for _, k := range markdown.ResolutionKeys(markdown.Parse("a.md", nil)) {
		if k.Step == markdown.StepTitle {
			t.Errorf("ResolutionKeys(a.md) has %v", k)
		}
	}
}

func TestLookupKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		link string
		want []markdown.Key
	}{
		{"[[Note]]", []markdown.Key{
			{Step: markdown.StepPath, Value: "note"}, {Step: markdown.StepStem, Value: "note"},
			{Step: markdown.StepTitle, Value: "note"}, {Step: markdown.StepAlias, Value: "note"}}},
		{"[[Sub/Note#h]]", []markdown.Key{
			{Step: markdown.StepPath, Value: "sub/note"}, {Step: markdown.StepSuffix, Value: "sub/note"},
			{Step: markdown.StepTitle, Value: "sub/note"}, {Step: markdown.StepAlias, Value: "sub/note"}}},
		{"[[../Up]]", []markdown.Key{
			{Step: markdown.StepFile, Value: "up"}, {Step: markdown.StepFile, Value: "up.md"}}},
		{"[x](Note.md)", []markdown.Key{
			{Step: markdown.StepFile, Value: "dir/note.md"},
			{Step: markdown.StepPath, Value: "note"}, {Step: markdown.StepStem, Value: "note"}}},
		{"[x](./Note.md)", []markdown.Key{{Step: markdown.StepFile, Value: "dir/note.md"}}},
		{"[[#h]]", nil},
		{"[x](../../y.md)", nil},
	}
	for _, tc := range tests {
		l := linkIn(t, "dir/page.md", tc.link)
		if diff := cmp.Diff(tc.want, markdown.LookupKeys(l)); diff != "" {
			t.Errorf("LookupKeys(%q) mismatch (-want +got):\n%s", tc.link, diff)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	holders := map[markdown.Key][]string{
		{Step: markdown.StepFile, Value: "b.md"}:  {"b.md"},
		{Step: markdown.StepStem, Value: "n"}:     {"x/n.md", "y/n.md"}, // sorted, as Match asks
		{Step: markdown.StepTitle, Value: "t"}:    {"t.md"},
		{Step: markdown.StepTitle, Value: "t2"}:   {"u.md"},
		{Step: markdown.StepFile, Value: "b"}:     {"b.md"},
		{Step: markdown.StepAlias, Value: "late"}: {"z.md"},
	}
	get := func(k markdown.Key) []string { return holders[k] }
	tests := []struct {
		keys []markdown.Key
		want markdown.Resolution
	}{
		{nil, markdown.Resolution{Status: markdown.StatusBroken}},
		{[]markdown.Key{{Step: markdown.StepFile, Value: "b"}, {Step: markdown.StepFile, Value: "b.md"}},
			markdown.Resolution{Status: markdown.StatusResolved, Path: "b.md", Step: markdown.StepFile}},
		{[]markdown.Key{{Step: markdown.StepPath, Value: "n"}, {Step: markdown.StepStem, Value: "n"}, {Step: markdown.StepTitle, Value: "t"}},
			markdown.Resolution{Status: markdown.StatusResolved, Path: "x/n.md", Step: markdown.StepStem, Candidates: []string{"x/n.md", "y/n.md"}}},
		{[]markdown.Key{{Step: markdown.StepTitle, Value: "t"}, {Step: markdown.StepTitle, Value: "t2"}},
			markdown.Resolution{Status: markdown.StatusAmbiguous, Step: markdown.StepTitle, Candidates: []string{"t.md", "u.md"}}},
		{[]markdown.Key{{Step: markdown.StepTitle, Value: "t"}, {Step: markdown.StepAlias, Value: "late"}},
			markdown.Resolution{Status: markdown.StatusResolved, Path: "t.md", Step: markdown.StepTitle}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, markdown.Match("", tc.keys, get)); diff != "" {
			t.Errorf("Match(%v) mismatch (-want +got):\n%s", tc.keys, diff)
		}
	}
}

func TestNewResolver_OrderIndependent(t *testing.T) {
	t.Parallel()
	_, pages := setup(t)
	var list []*markdown.Page
	var links []markdown.Link
	for _, p := range pages {
		list = append(list, p)
	}
	for _, src := range []string{"[[readme]]", "[[attention]]", "[[sub/note]]", "[[paper.pdf]]", "[[common]]", "[a](vaswani.md)"} {
		links = append(links, linkIn(t, "concepts/x.md", src))
	}
	base := markdown.NewResolver(list, testAttachments)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		atts := append([]string(nil), testAttachments...)
		rng.Shuffle(len(atts), func(i, j int) { atts[i], atts[j] = atts[j], atts[i] })
		r := markdown.NewResolver(list, atts)
		for _, l := range links {
			if diff := cmp.Diff(base.Resolve(nil, l), r.Resolve(nil, l)); diff != "" {
				t.Fatalf("Resolve(%q) depends on input order (-first +shuffled):\n%s", l.Raw, diff)
			}
		}
	}
}

// TestMatch_Nearest: among files sharing a name, the one in the linking
// page's folder wins, found among the files under that folder (its
// subfolders' and its neighbours' sort beside them); else the shortest
// path.
func TestMatch_Nearest(t *testing.T) {
	t.Parallel()
	found := []string{"a/b-x/n.md", "a/b/c/n.md", "a/b/n.md", "a/bb/n.md", "a/n.md", "n.md", "zz/n.md"}
	get := func(k markdown.Key) []string { return found }
	keys := []markdown.Key{{Step: markdown.StepStem, Value: "n"}}
	for from, want := range map[string]string{
		"a/b/page.md":   "a/b/n.md",
		"a/b/c/page.md": "a/b/c/n.md",
		"a/bb/page.md":  "a/bb/n.md",
		"a/page.md":     "a/n.md",
		"page.md":       "n.md",
		"a/b-y/page.md": "n.md", // no n.md of its own: the shortest
		"a/b/d/page.md": "n.md",
	} {
		res := markdown.Match(from, keys, get)
		if res.Status != markdown.StatusResolved || res.Path != want {
			t.Errorf("from %s: %s %s, want %s", from, res.Status, res.Path, want)
		}
	}
}

// TestMatch_ManyCandidates: a name many files share lists the first
// MaxCandidates of them and counts the rest; a resolved link's file is
// among those listed wherever it sorts.
func TestMatch_ManyCandidates(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 1500 {
		many = append(many, fmt.Sprintf("t%04d/index.md", i))
	}
	title := []markdown.Key{{Step: markdown.StepTitle, Value: "index"}}
	stem := []markdown.Key{{Step: markdown.StepStem, Value: "index"}}
	tests := []struct {
		name  string
		keys  []markdown.Key
		found []string
		want  markdown.Resolution
	}{
		{"Ambiguous", title, many, markdown.Resolution{Status: markdown.StatusAmbiguous, Step: markdown.StepTitle,
			Candidates: many[:markdown.MaxCandidates], MoreCandidates: 1500 - markdown.MaxCandidates}},
		{"AsMany", title, many[:markdown.MaxCandidates], markdown.Resolution{Status: markdown.StatusAmbiguous,
			Step: markdown.StepTitle, Candidates: many[:markdown.MaxCandidates]}},
		{"ShortestFirst", stem, append([]string{"index.md"}, many...), markdown.Resolution{Status: markdown.StatusResolved,
			Path: "index.md", Step: markdown.StepStem, Candidates: append([]string{"index.md"}, many[:markdown.MaxCandidates-1]...),
			MoreCandidates: 1501 - markdown.MaxCandidates}},
		{"ShortestLast", stem, append(slices.Clone(many), "z/index.md"), markdown.Resolution{Status: markdown.StatusResolved,
			Path: "z/index.md", Step: markdown.StepStem, Candidates: append(slices.Clone(many[:markdown.MaxCandidates-1]), "z/index.md"),
			MoreCandidates: 1501 - markdown.MaxCandidates}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := markdown.Match("notes/n.md", tc.keys, func(markdown.Key) []string { return tc.found })
			if diff := cmp.Diff(tc.want, res); diff != "" {
				t.Errorf("Match mismatch (-want +got):\n%s", diff)
			}
		})
	}
	res := markdown.Resolution{Candidates: []string{"a.md", "b.md"}, MoreCandidates: 1490}
	if got, want := res.CandidateList(), "a.md, b.md and 1490 more"; got != want {
		t.Errorf("CandidateList() = %q, want %q", got, want)
	}
}
