package markdown_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"cairn/markdown"

	"github.com/google/go-cmp/cmp"
)

// The seed corpora live in testdata/fuzz/<Name>/.

func FuzzParse(f *testing.F) {
	f.Add("notes/a.md", []byte("---\ntitle: T\n---\n# H\n[[x|y]] ![[z.png]] [m](../m.md#h)\n"))
	f.Fuzz(func(t *testing.T, path string, src []byte) {
		p := markdown.Parse(path, src)
		if p.Title == "" {
			t.Errorf("Parse(%q, %q).Title is empty", path, src)
		}
		if path != "" && p.ID == "" {
			t.Errorf("Parse(%q, %q).ID is empty", path, src)
		}
		lines := 1 + bytes.Count(src, []byte("\n"))
		valid := utf8.Valid(src) && bytes.IndexByte(src, 0) < 0
		for _, l := range p.Links {
			if l.Line < 1 || l.Line > lines || l.Offset < 0 || l.Offset > len(src) {
				t.Errorf("link %+v is outside the %d lines, %d bytes of %q", l, lines, len(src), src)
				continue
			}
			lineStart := bytes.LastIndexByte(src[:l.Offset], '\n') + 1
			if got := 1 + bytes.Count(src[:l.Offset], []byte("\n")); got != l.Line || l.Col != l.Offset-lineStart+1 {
				t.Errorf("link %+v: offset %d is on line %d col %d", l, l.Offset, got, l.Offset-lineStart+1)
			}
			if l.Kind != markdown.LinkFrontmatter && valid && !bytes.HasPrefix(src[l.Offset:], []byte(l.Raw)) {
				t.Errorf("link %+v: source at its offset is not its Raw", l)
			}
			if l.Kind == "" {
				t.Errorf("link %+v has no kind", l)
			}
		}
		for _, h := range p.Headings {
			if h.Line < 1 || h.Line > lines || h.Level < 1 || h.Level > 6 {
				t.Errorf("heading %+v out of bounds", h)
			}
		}
		if p.BodyOffset < 0 || p.BodyOffset > len(src) {
			t.Errorf("BodyOffset %d outside %d bytes", p.BodyOffset, len(src))
		}
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("json.Marshal(Parse(%q)) = %v", src, err)
		}
		if !utf8.Valid(data) {
			t.Errorf("JSON of Parse(%q) is not UTF-8", src)
		}
		// reflect first: cmp.Diff takes exponential time on deeply nested
		// frontmatter ([[[[…]]]]), which Parse reads in linear time.
		if again := markdown.Parse(path, src); !reflect.DeepEqual(p, again) {
			t.Errorf("Parse(%q) is not deterministic:\n%s", src, cmp.Diff(p, again))
		}
		markdown.PlainText(src)
	})
}

// FuzzFrontmatter checks that the hand-written reader agrees with yaml.v3
// whenever it accepts the input, and that no frontmatter breaks Parse.
func FuzzFrontmatter(f *testing.F) {
	f.Add([]byte("title: T\naliases: [a, 'b, c']\ntags:\n  - x\n  - \"[[Y]]\"\n"))
	f.Fuzz(func(t *testing.T, yaml []byte) {
		fast, ok := markdown.FastFrontmatter(yaml)
		slow := markdown.SlowFrontmatter(yaml)
		if ok {
			if diff := cmp.Diff(slow, fast); diff != "" {
				t.Errorf("fast and yaml.v3 readers disagree on %q (-yaml.v3 +fast):\n%s", yaml, diff)
			}
		}
		src := append(append([]byte("---\n"), yaml...), "\n---\nbody [[x]]\n"...)
		p := markdown.Parse("a.md", src)
		if _, err := json.Marshal(p); err != nil {
			t.Fatalf("json.Marshal(Parse(%q)) = %v", src, err)
		}
		if p.Frontmatter == nil && len(p.Aliases)+len(p.Sources) > 0 {
			t.Errorf("aliases or sources without frontmatter from %q", src)
		}
	})
}

// FuzzLinks checks that the links of a text do not depend on the text
// around it, and that a code fence hides them all.
func FuzzLinks(f *testing.F) {
	f.Add([]byte("a [[b]] `[[c]]` [d](e.md)\n\n```\n[[f]]\n```\n%% [[g]] %%\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		alone := markdown.Parse("dir/p.md", body)
		if alone.BodyOffset > 0 || bytes.HasPrefix(body, []byte("---")) {
			t.Skip("frontmatter changes meaning when wrapped")
		}
		const prefix = "Intro paragraph.\n\n"
		wrapped := markdown.Parse("dir/p.md", []byte(prefix+string(body)+"\n\nOutro [[outro]].\n"))
		var want, got []markdown.Link
		for _, l := range alone.Links {
			l.Line += 2
			l.Offset += len(prefix)
			want = append(want, l)
		}
		for _, l := range wrapped.Links {
			if l.Offset < len(prefix)+len(body) {
				got = append(got, l)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("links of %q change when wrapped (-alone +wrapped):\n%s", body, diff)
		}

		fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
		fenced := markdown.Parse("dir/p.md", []byte(fence+"\n"+string(body)+"\n"+fence+"\n"))
		if len(fenced.Links)+len(fenced.Headings)+len(fenced.BlockIDs) > 0 {
			t.Errorf("fenced %q yields links %v, headings %v, block ids %v", body, fenced.Links, fenced.Headings, fenced.BlockIDs)
		}
	})
}

func longestRun(b []byte, c byte) int {
	longest, n := 0, 0
	for _, x := range b {
		if x == c {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}

// FuzzResolve builds a vault from vault (one file a line: "path|page
// source", "\n" in the source written as "\\n"; a path not ending in ".md"
// is an attachment) and resolves the links of linking. Resolution must not
// depend on the order of pages and attachments, must agree with Match over
// the exported keys and with the target page's own fragment checks, and
// must be well formed.
func FuzzResolve(f *testing.F) {
	f.Add("a/note.md|# Note\nb/note.md|---\\ntitle: T\\n---\nimg/x.png|", "[[note]] [[T]] ![[x.png]] [[a/note#Note]]", uint64(1))
	f.Add("p.md|# A\\n# A\\nFoo\\nbar\\n===\\nline ^blk\\n## Part *x*\\n",
		"[[p#a-1]] [[p#A]] [[p#Foo bar]] [[p#^BLK]] [[p#^none]] [[p#Part x]] [[p#part-x]] [x](p.md#a-2) [[p#A#A]]", uint64(3))
	f.Add("from/note.md|\nb/note.md|\nlonger/note.md|\nx/sub/note.md|\ny/sub/note.md|", "[[note]] [[sub/note]] [n](note.md)", uint64(2))
	// None in the linking page's folder: the shortest in UTF-16 units
	// (é one, 😀 two), which the resolver keeps for each name.
	f.Add("zz/note.md|\né/note.md|\nab/note.md|\n😀/note.md|\ne/sub/note.md|\nf/sub/note.md|", "[[note]] [[sub/note]] [[note#x]]", uint64(4))
	f.Fuzz(func(t *testing.T, vault, linking string, seed uint64) {
		var pages []*markdown.Page
		var attachments []string
		seen := map[string]bool{}
		for line := range strings.Lines(vault) {
			path, src, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "|")
			if path == "" || seen[path] || len(seen) >= 64 {
				continue
			}
			seen[path] = true
			if strings.HasSuffix(path, ".md") {
				pages = append(pages, markdown.Parse(path, []byte(strings.ReplaceAll(src, `\n`, "\n"))))
			} else {
				attachments = append(attachments, path)
			}
		}
		from := markdown.Parse("from/page.md", []byte(linking))
		r := markdown.NewResolver(pages, attachments)

		rng := rand.New(rand.NewPCG(seed, seed>>32))
		shuffled := slices.Clone(pages)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		atts := slices.Clone(attachments)
		rng.Shuffle(len(atts), func(i, j int) { atts[i], atts[j] = atts[j], atts[i] })
		r2 := markdown.NewResolver(shuffled, atts)

		for _, l := range from.Links {
			res := r.Resolve(from, l)
			if diff := cmp.Diff(res, r2.Resolve(from, l)); diff != "" {
				t.Errorf("Resolve(%q) depends on input order:\n%s", l.Raw, diff)
			}
			if !l.SamePage() {
				m := markdown.Match(from.Path, markdown.LookupKeys(l), r.Holders)
				if m.Status != res.Status || m.Path != res.Path || m.Step != res.Step || !slices.Equal(m.Candidates, res.Candidates) {
					t.Errorf("Resolve(%q) = %+v but Match over its keys = %+v", l.Raw, res, m)
				}
			}
			switch res.Status {
			case markdown.StatusResolved:
				if res.Path == "" || !res.SamePage && !seen[res.Path] {
					t.Errorf("Resolve(%q) = %+v: resolved to a file not in the vault", l.Raw, res)
				}
				if res.Candidates != nil && (!res.Chosen() || !slices.IsSorted(res.Candidates) || !slices.Contains(res.Candidates, res.Path)) {
					t.Errorf("Resolve(%q) = %+v: chose a file not among its candidates", l.Raw, res)
				}
			case markdown.StatusAmbiguous:
				if len(res.Candidates) < 2 || !slices.IsSorted(res.Candidates) || res.Path != "" {
					t.Errorf("Resolve(%q) = %+v: bad ambiguity", l.Raw, res)
				}
			case markdown.StatusBroken:
				if res.Path != "" || res.Candidates != nil {
					t.Errorf("Resolve(%q) = %+v: broken with a target", l.Raw, res)
				}
			default:
				t.Errorf("Resolve(%q) = %+v: unknown status", l.Raw, res)
			}
			// The resolver keeps a page's headings and block ids packed:
			// its checks of a fragment agree with the page's own.
			if i := slices.IndexFunc(pages, func(p *markdown.Page) bool { return p.Path == res.Path }); i >= 0 && !res.SamePage && res.Status == markdown.StatusResolved {
				p := pages[i]
				if want := l.Heading != "" && !p.HasHeading(l.Heading); res.MissingHeading != want {
					t.Errorf("Resolve(%q) = %+v: MissingHeading, want %v (headings %+v)", l.Raw, res, want, p.Headings)
				}
				if want := l.Block != "" && !p.HasBlock(l.Block); res.MissingBlock != want {
					t.Errorf("Resolve(%q) = %+v: MissingBlock, want %v (blocks %q)", l.Raw, res, want, p.BlockIDs)
				}
			}
		}
	})
}
