package vaultgen_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"cairn"
	"cairn/internal/vaultgen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// asText makes go-cmp compare file contents as strings: element by element
// it takes seconds, and its diffs of text are readable.
var asText = gocmp.Transformer("text", func(b []byte) string { return string(b) })

// setup returns a generated vault and all its files.
func setup(t *testing.T, cfg vaultgen.Config) (*vaultgen.Vault, []vaultgen.File) {
	t.Helper()
	v := vaultgen.New(cfg)
	return v, slices.Collect(v.Files())
}

// pages returns the files that are pages: everything but index.md, log.md
// and raw/.
func pages(files []vaultgen.File) []vaultgen.File {
	var out []vaultgen.File
	for _, f := range files {
		if f.Path != "index.md" && f.Path != "log.md" && !strings.HasPrefix(f.Path, "raw/") {
			out = append(out, f)
		}
	}
	return out
}

// split cuts a generated file into its frontmatter YAML and body. (Generated
// frontmatter is always "---\n...\n---\n"; the markdown package handles the
// general case.)
func split(data []byte) (yml, body []byte, found bool) {
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return nil, data, false
	}
	yml, body, found = bytes.Cut(rest, []byte("\n---\n"))
	if !found {
		return nil, data, false
	}
	return yml, body, true
}

func TestNew_Deterministic(t *testing.T) {
	t.Parallel()
	cfg := vaultgen.Config{Pages: 300, Seed: 9, Raw: true}
	v, a := setup(t, cfg)
	_, b := setup(t, cfg)
	if diff := gocmp.Diff(a, b, asText); diff != "" {
		t.Fatalf("two generations differ (-first +second):\n%s", diff)
	}
	if diff := gocmp.Diff(a, v.All(), asText); diff != "" {
		t.Fatalf("All() differs from Files() (-Files +All):\n%s", diff)
	}
	for i := range v.Len() {
		if got, want := v.Page(i), a[i+2]; !bytes.Equal(got.Data, want.Data) || got.Path != want.Path {
			t.Fatalf("Page(%d) = %s, want the file Files yields, %s", i, got.Path, want.Path)
		}
	}
	_, c := setup(t, vaultgen.Config{Pages: 300, Seed: 10, Raw: true})
	if bytes.Equal(a[2].Data, c[2].Data) {
		t.Errorf("seeds 9 and 10 give the same first page")
	}
}

// TestFiles_Golden pins the bytes of a fixed vault, so that any change to
// the generator is deliberate: run with -update to accept one.
func TestFiles_Golden(t *testing.T) {
	t.Parallel()
	h := sha256.New()
	n := 0
	for f := range vaultgen.New(vaultgen.Config{Pages: 500, Seed: 42, Raw: true}).Files() {
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write(f.Data)
		h.Write([]byte{0})
		if n++; n == 50 {
			break
		}
	}
	got := hex.EncodeToString(h.Sum(nil)) + "\n"
	golden := filepath.Join("testdata", "golden.sha256")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("SHA-256 of the first 50 files = %s, want %s (run go test -update if the change is intended)", got, want)
	}
}

func TestPages_Size(t *testing.T) {
	t.Parallel()
	_, files := setup(t, vaultgen.Config{})
	ps := pages(files)
	if len(ps) != 1000 {
		t.Fatalf("default vault has %d pages, want 1000", len(ps))
	}
	total := 0
	for _, f := range ps {
		total += len(f.Data)
		if len(f.Data) < 800 || len(f.Data) > 5000 {
			t.Errorf("%s is %d bytes, want about 1–4 KB", f.Path, len(f.Data))
		}
	}
	if avg := total / len(ps); avg < 1500 || avg > 2500 {
		t.Errorf("average page size = %d bytes, want 1500–2500", avg)
	}
}

var (
	wikilink = regexp.MustCompile(`\[\[([^\]]+)\]\]`)
	fence    = regexp.MustCompile("(?m)^```[a-z]*\n(?s:.*?)^```\n")
)

// resolver finds pages the way cairn resolves links: by path, stem or
// title, case-insensitively.
type resolver struct {
	byName   map[string]string   // lower-cased path without .md, stem or title → path
	headings map[string][]string // path → its headings
}

func newResolver(t *testing.T, files []vaultgen.File) *resolver {
	t.Helper()
	r := &resolver{byName: map[string]string{}, headings: map[string][]string{}}
	add := func(name, path string) {
		name = strings.ToLower(name)
		if old, ok := r.byName[name]; ok && old != path {
			t.Errorf("%q names both %s and %s", name, old, path)
		}
		r.byName[name] = path
	}
	for _, f := range files {
		if strings.HasPrefix(f.Path, "raw/") || f.Path == "log.md" {
			continue
		}
		yml, body, _ := split(f.Data)
		id := strings.TrimSuffix(f.Path, ".md")
		add(id, f.Path)
		add(id[strings.LastIndex(id, "/")+1:], f.Path)
		var fm struct{ Title string }
		if err := yaml.Unmarshal(yml, &fm); err != nil {
			t.Fatalf("%s: frontmatter: %v", f.Path, err)
		}
		add(fm.Title, f.Path)
		for line := range strings.Lines(string(fence.ReplaceAll(body, nil))) {
			if h, ok := strings.CutPrefix(line, "## "); ok {
				r.headings[f.Path] = append(r.headings[f.Path], strings.TrimSpace(h))
			}
		}
	}
	return r
}

// links returns the wikilinks of a file, outside code blocks.
func links(data []byte) []string {
	var out []string
	_, body, _ := split(data)
	for _, m := range wikilink.FindAllSubmatch(fence.ReplaceAll(body, nil), -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// resolve returns the path link goes to, or an error saying why it does not
// resolve.
func (r *resolver) resolve(link string) (string, error) {
	target, _, _ := strings.Cut(link, "|")
	target, heading, hasHeading := strings.Cut(target, "#")
	path, ok := r.byName[strings.ToLower(target)]
	if !ok {
		return "", errors.New("no such page")
	}
	if hasHeading && !slices.Contains(r.headings[path], heading) {
		return "", errors.New("no such heading in " + path)
	}
	return path, nil
}

func TestPages_Links(t *testing.T) {
	t.Parallel()
	_, files := setup(t, vaultgen.Config{Raw: true})
	r := newResolver(t, files)
	backlinks := map[string]int{}
	total, ps := 0, pages(files)
	forms := map[string]int{}
	for _, f := range files {
		ls := links(f.Data)
		if f.Path != "index.md" && f.Path != "log.md" && !strings.HasPrefix(f.Path, "raw/") {
			if len(ls) < 3 || len(ls) > 7 {
				t.Errorf("%s has %d links, want 3–7", f.Path, len(ls))
			}
			total += len(ls)
		}
		for _, l := range ls {
			to, err := r.resolve(l)
			if err != nil {
				t.Errorf("%s: link [[%s]]: %v", f.Path, l, err)
				continue
			}
			if to == f.Path {
				t.Errorf("%s links to itself: [[%s]]", f.Path, l)
			}
			if f.Path != "index.md" && f.Path != "log.md" {
				backlinks[to]++
				forms[linkForm(l)]++
			}
		}
	}
	if avg := float64(total) / float64(len(ps)); avg < 4.5 || avg > 5.5 {
		t.Errorf("average links per page = %.2f, want 4.5–5.5", avg)
	}
	for _, form := range []string{"path", "stem", "title", "label", "heading"} {
		if forms[form] < total/20 {
			t.Errorf("%d of %d links are of the %s form, want at least 5%%", forms[form], total, form)
		}
	}
	// Popular pages collect far more than their share.
	most := 0
	for _, n := range backlinks {
		most = max(most, n)
	}
	if avg := float64(total) / float64(len(ps)); float64(most) < 10*avg {
		t.Errorf("the most linked page has %d backlinks, want at least 10× the average %.1f", most, avg)
	}
}

// linkForm names the form of a wikilink's inside.
func linkForm(l string) string {
	switch {
	case strings.Contains(l, "#"):
		return "heading"
	case strings.Contains(l, "/"):
		return "path"
	case strings.Contains(l, "|"):
		return "label"
	case strings.Contains(l, " ") || l != strings.ToLower(l):
		return "title"
	}
	return "stem"
}

func TestTitles_Unique(t *testing.T) {
	t.Parallel()
	v := vaultgen.New(vaultgen.Config{Pages: 20000})
	seen := map[string]int{}
	for i, title := range v.Titles() {
		key := strings.ToLower(title)
		if j, ok := seen[key]; ok {
			t.Errorf("pages %d and %d are both titled %q", j, i, title)
		}
		seen[key] = i
		if n := len(strings.Fields(title)); n < 2 || n > 5 {
			t.Errorf("title %q has %d words, want 2–5", title, n)
		}
	}
}

func TestVocabulary(t *testing.T) {
	t.Parallel()
	words := vaultgen.New(vaultgen.Config{Pages: 2}).Vocabulary()
	if len(words) != vaultgen.VocabularySize || vaultgen.VocabularySize != 30000 {
		t.Fatalf("vocabulary has %d words, want 30000", len(words))
	}
	seen := map[string]bool{}
	valid := regexp.MustCompile(`^([a-z]{2,12}|a)$`)
	for _, w := range words {
		if seen[w] {
			t.Errorf("%q appears twice", w)
		}
		seen[w] = true
		if !valid.MatchString(w) {
			t.Errorf("%q is not \"a\" or 2–12 lowercase ASCII letters", w)
		}
	}
}

// TestPages_Zipf checks that word frequencies in page bodies follow Zipf's
// law: the most frequent word is about 10^s times as frequent as the tenth.
func TestPages_Zipf(t *testing.T) {
	t.Parallel()
	v, files := setup(t, vaultgen.Config{})
	counts := map[string]int{}
	for _, f := range pages(files) {
		_, body, _ := split(f.Data)
		for w := range strings.FieldsFuncSeq(string(body), func(r rune) bool { return r < 'a' || r > 'z' }) {
			counts[w]++
		}
	}
	freq := make([]int, 0, len(counts))
	for _, n := range counts {
		freq = append(freq, n)
	}
	slices.SortFunc(freq, func(a, b int) int { return cmp.Compare(b, a) })
	want := math.Pow(10, vaultgen.ZipfExponent)
	got := float64(freq[0]) / float64(freq[9])
	t.Logf("top word / 10th word = %.2f; 10^s = %.2f; %d distinct words", got, want, len(counts))
	if got < want*0.8 || got > want*1.25 {
		t.Errorf("frequency of the top word / the 10th = %.2f, want %.2f ± 20%%", got, want)
	}
	if top := v.Vocabulary()[0]; counts[top] != freq[0] {
		t.Errorf("the most frequent word is not rank 1 %q", top)
	}
	if len(counts) < 10000 {
		t.Errorf("1,000 pages use %d distinct words, want a long tail of at least 10,000", len(counts))
	}
}

func TestConfig_Flat(t *testing.T) {
	t.Parallel()
	_, files := setup(t, vaultgen.Config{Pages: 500, Flat: true})
	for _, f := range files {
		if f.Path != "index.md" && f.Path != "log.md" && !strings.HasPrefix(f.Path, "notes/") {
			t.Errorf("flat vault has %s outside notes/", f.Path)
		}
	}
	r := newResolver(t, files)
	for _, f := range files {
		for _, l := range links(f.Data) {
			if _, err := r.resolve(l); err != nil {
				t.Errorf("%s: link [[%s]]: %v", f.Path, l, err)
			}
		}
	}
}

type frontmatter struct {
	Title   string    `yaml:"title"`
	Type    string    `yaml:"type"`
	Source  string    `yaml:"source"`
	Tags    []string  `yaml:"tags"`
	Aliases []string  `yaml:"aliases"`
	Updated time.Time `yaml:"updated"`
}

func parseFrontmatter(t *testing.T, f vaultgen.File) frontmatter {
	t.Helper()
	yml, _, found := split(f.Data)
	if !found {
		t.Fatalf("%s has no frontmatter", f.Path)
	}
	var fm frontmatter
	dec := yaml.NewDecoder(bytes.NewReader(yml))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		t.Fatalf("%s: frontmatter: %v\n%s", f.Path, err, yml)
	}
	return fm
}

func TestPages_Frontmatter(t *testing.T) {
	t.Parallel()
	v, files := setup(t, vaultgen.Config{Raw: true})
	paths := map[string]bool{}
	for _, f := range files {
		paths[f.Path] = true
	}
	folders := map[string]string{"entity": "entities", "concept": "concepts", "summary": "summaries", "analysis": "analyses"}
	types := map[string]int{}
	aliases := map[string]string{}
	titles := v.Titles()
	for i, f := range pages(files) {
		fm := parseFrontmatter(t, f)
		types[fm.Type]++
		if fm.Title != titles[i] {
			t.Errorf("%s: title %q, want %q", f.Path, fm.Title, titles[i])
		}
		if want := folders[fm.Type] + "/" + kebab(fm.Title) + ".md"; f.Path != want {
			t.Errorf("%s: type %s and title %q, want path %s", f.Path, fm.Type, fm.Title, want)
		}
		if len(fm.Tags) > 4 || slices.Contains(fm.Tags, "") {
			t.Errorf("%s: tags %q, want up to 4", f.Path, fm.Tags)
		}
		if fm.Updated.Year() < 2023 || fm.Updated.Year() > 2026 {
			t.Errorf("%s: updated %v, want 2023–2026", f.Path, fm.Updated)
		}
		if (fm.Type == "summary") != (fm.Source != "") {
			t.Errorf("%s: type %s with source %q; summaries and only summaries cite a source", f.Path, fm.Type, fm.Source)
		}
		if fm.Source != "" && !paths[fm.Source] {
			t.Errorf("%s: source %s is not in the vault", f.Path, fm.Source)
		}
		for _, a := range fm.Aliases {
			key := strings.ToLower(a)
			if other, ok := aliases[key]; ok {
				t.Errorf("%s and %s share the alias %q", f.Path, other, a)
			}
			if slices.ContainsFunc(titles, func(t string) bool { return strings.EqualFold(t, a) }) {
				t.Errorf("%s: alias %q is a title", f.Path, a)
			}
			aliases[key] = f.Path
		}
	}
	// Expected shares are 40/30/20/10%.
	for typ, want := range map[string]int{"entity": 400, "concept": 300, "summary": 200, "analysis": 100} {
		if got := types[typ]; got < want*3/4 || got > want*5/4 {
			t.Errorf("%d pages of type %s, want about %d", got, typ, want)
		}
	}
	if len(aliases) == 0 {
		t.Errorf("no page has aliases")
	}
	if fm := parseFrontmatter(t, files[0]); fm.Title != "Home" || fm.Type != "index" {
		t.Errorf("index.md: title %q, type %q; want Home, index", fm.Title, fm.Type)
	}
}

func kebab(title string) string { return strings.ToLower(strings.ReplaceAll(title, " ", "-")) }

func TestFiles_IndexAndLog(t *testing.T) {
	t.Parallel()
	v := vaultgen.New(vaultgen.Config{Pages: 100000, IndexLimit: 1000})
	var index, log vaultgen.File
	for f := range v.Files() {
		if f.Path == "index.md" {
			index = f
		} else {
			log = f
			break
		}
	}
	if len(index.Data) > 100<<10 {
		t.Errorf("index.md of a 100k-page vault is %d bytes, want under 100 KB", len(index.Data))
	}
	var sections []string
	entries := 0
	for line := range strings.Lines(string(index.Data)) {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			sections = append(sections, strings.TrimSpace(h))
		}
		if strings.HasPrefix(line, "- [[") {
			entries++
		}
	}
	if diff := gocmp.Diff([]string{"Entities", "Concepts", "Source summaries", "Analyses"}, sections); diff != "" {
		t.Errorf("index.md sections (-want +got):\n%s", diff)
	}
	if entries != 1000 {
		t.Errorf("index.md lists %d pages, want 1000", entries)
	}

	if log.Path != "log.md" || !bytes.HasPrefix(log.Data, []byte("# Log\n")) {
		t.Fatalf("second file is %s, want log.md starting with # Log", log.Path)
	}
	entry := regexp.MustCompile(`^## \[(\d{4}-\d{2}-\d{2})\] ingest \| (\S+\.md)$`)
	var dates []string
	for line := range strings.Lines(string(log.Data)) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasPrefix(line, "## ") {
			continue
		}
		m := entry.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("log.md: entry %q is not in Eva's format", line)
			continue
		}
		dates = append(dates, m[1])
	}
	if len(dates) != 36 || !slices.IsSorted(dates) {
		t.Errorf("log.md has entries dated %q, want 36 in date order", dates)
	}
}

func TestVault_Queries(t *testing.T) {
	t.Parallel()
	v := vaultgen.New(vaultgen.Config{})
	words := map[string]bool{}
	for _, title := range v.Titles() {
		for _, w := range strings.Fields(strings.ToLower(title)) {
			words[w] = true
		}
	}
	qs := v.Queries(1000, 7)
	if diff := gocmp.Diff(qs, v.Queries(1000, 7)); diff != "" {
		t.Errorf("Queries(1000, 7) changed between calls:\n%s", diff)
	}
	var lengths [4]int
	for _, q := range qs {
		terms := strings.Fields(q)
		if len(terms) < 1 || len(terms) > 3 {
			t.Errorf("query %q has %d terms, want 1–3", q, len(terms))
			continue
		}
		lengths[len(terms)]++
		for _, w := range terms {
			if !words[w] {
				t.Errorf("query %q: %q is not a title word", q, w)
			}
		}
	}
	for n := 1; n <= 3; n++ {
		if lengths[n] < 100 {
			t.Errorf("%d of 1000 queries have %d terms, want a mix", lengths[n], n)
		}
	}
	if slices.Equal(qs[:10], v.Queries(10, 8)) {
		t.Errorf("Queries(10, 8) = Queries(10, 7)")
	}
}

func TestVault_Edit(t *testing.T) {
	t.Parallel()
	v, files := setup(t, vaultgen.Config{Pages: 300})
	r := newResolver(t, files)
	for i := range 100 {
		page := v.Page(i)
		if got := v.Edit(i, 0); !bytes.Equal(got.Data, page.Data) {
			t.Fatalf("Edit(%d, 0) differs from Page(%d)", i, i)
		}
		for rev := 1; rev <= 3; rev++ {
			e := v.Edit(i, rev)
			if e.Path != page.Path || bytes.Equal(e.Data, page.Data) {
				t.Fatalf("Edit(%d, %d) = %s, same content %t; want a change to %s", i, rev, e.Path, bytes.Equal(e.Data, page.Data), page.Path)
			}
			if again := v.Edit(i, rev); !bytes.Equal(again.Data, e.Data) {
				t.Fatalf("Edit(%d, %d) is not deterministic", i, rev)
			}
			before, after := parseFrontmatter(t, page), parseFrontmatter(t, e)
			if !after.Updated.After(before.Updated) {
				t.Errorf("Edit(%d, %d): updated %v, want after %v", i, rev, after.Updated, before.Updated)
			}
			// A small edit: the frontmatter and at most one paragraph
			// or list.
			if n := changedBlocks(page.Data, e.Data); n > 2 {
				t.Errorf("Edit(%d, %d) changes %d blocks, want at most 2", i, rev, n)
			}
			for _, l := range links(e.Data) {
				if _, err := r.resolve(l); err != nil {
					t.Errorf("Edit(%d, %d): link [[%s]]: %v", i, rev, l, err)
				}
			}
		}
	}
}

// changedBlocks counts the blocks (text between blank lines) of b that are
// not blocks of a.
func changedBlocks(a, b []byte) int {
	old := map[string]int{}
	for _, block := range strings.Split(string(a), "\n\n") {
		old[block]++
	}
	n := 0
	for _, block := range strings.Split(string(b), "\n\n") {
		if old[block] > 0 {
			old[block]--
		} else {
			n++
		}
	}
	return n
}

func TestVault_WriteDir(t *testing.T) {
	t.Parallel()
	v, files := setup(t, vaultgen.Config{Pages: 200, Raw: true})
	dir := t.TempDir()
	if err := v.WriteDir(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	var written []vaultgen.File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		written = append(written, vaultgen.File{Path: filepath.ToSlash(rel), Data: data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	byPath := cmpopts.SortSlices(func(a, b vaultgen.File) bool { return a.Path < b.Path })
	if diff := gocmp.Diff(files, written, asText, byPath); diff != "" {
		t.Errorf("WriteDir wrote other files than Files yields (-files +written):\n%s", diff)
	}
	var total int64
	for _, f := range files {
		total += int64(len(f.Data))
	}
	if got := v.RawBytes(); got != total {
		t.Errorf("RawBytes() = %d, want %d", got, total)
	}
}

func TestVault_WriteDir_ErrCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := vaultgen.New(vaultgen.Config{Pages: 50}).WriteDir(ctx, t.TempDir())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WriteDir with a canceled context = %v, want context.Canceled", err)
	}
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]vaultgen.Config{
		"Pages1":        {Pages: 1},
		"PagesNegative": {Pages: -5},
		"PagesTooMany":  {Pages: vaultgen.MaxPages + 1},
		"IndexLimit":    {IndexLimit: -1},
		"LogEntries":    {LogEntries: -1},
	} {
		t.Run(name, func(t *testing.T) {
			if err := cfg.Validate(); cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("Validate() = %v, want code %s", err, cairn.EINVALID)
			}
			defer func() {
				if recover() == nil {
					t.Errorf("New(%+v) did not panic", cfg)
				}
			}()
			vaultgen.New(cfg)
		})
	}
	if err := (vaultgen.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: Validate() = %v, want nil", err)
	}
}

func TestNew_Small(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 7, 20} {
		_, files := setup(t, vaultgen.Config{Pages: n, Raw: true, LogEntries: 100})
		r := newResolver(t, files)
		for _, f := range files {
			for _, l := range links(f.Data) {
				if to, err := r.resolve(l); err != nil || to == f.Path {
					t.Errorf("Pages %d: %s: link [[%s]] goes to %q, %v", n, f.Path, l, to, err)
				}
			}
		}
	}
}

// TestFrequentQueries: the harder mix is deterministic, and every query
// holds one of the twenty words that are in the most titles.
func TestFrequentQueries(t *testing.T) {
	v := vaultgen.New(vaultgen.Config{Pages: 2000})
	qs := v.FrequentQueries(200, 1)
	if again := vaultgen.New(vaultgen.Config{Pages: 2000}).FrequentQueries(200, 1); !slices.Equal(qs, again) {
		t.Fatalf("FrequentQueries is not deterministic: %q, then %q", qs[:3], again[:3])
	}
	inTitles := map[string]int{}
	for i := range v.Len() {
		for _, w := range strings.Split(strings.TrimSuffix(filepath.Base(v.Path(i)), ".md"), "-") {
			inTitles[w]++
		}
	}
	words := make([]string, 0, len(inTitles))
	for w := range inTitles {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(inTitles[b]-inTitles[a], strings.Compare(a, b)) })
	top := words[:20]
	for _, q := range qs {
		if !slices.ContainsFunc(strings.Fields(q), func(w string) bool { return slices.Contains(top, w) }) {
			t.Errorf("query %q holds none of the most frequent title words %q", q, top)
		}
	}
}

// TestPrefixQueries: the prefix mix is deterministic, every query ends in
// a prefix of one to three letters of a title word, every length is there,
// and about half the queries have a word before it.
func TestPrefixQueries(t *testing.T) {
	v := vaultgen.New(vaultgen.Config{Pages: 2000})
	qs := v.PrefixQueries(300, 1)
	if again := vaultgen.New(vaultgen.Config{Pages: 2000}).PrefixQueries(300, 1); !slices.Equal(qs, again) {
		t.Fatalf("PrefixQueries is not deterministic: %q, then %q", qs[:3], again[:3])
	}
	var titleWords []string
	for i := range v.Len() {
		titleWords = append(titleWords, strings.Split(strings.TrimSuffix(filepath.Base(v.Path(i)), ".md"), "-")...)
	}
	lengths, two := map[int]int{}, 0
	for _, q := range qs {
		terms := strings.Fields(q)
		last := terms[len(terms)-1]
		p, ok := strings.CutSuffix(last, "*")
		n := utf8.RuneCountInString(p)
		if !ok || n < 1 || n > 3 || !slices.ContainsFunc(titleWords, func(w string) bool { return strings.HasPrefix(w, p) }) {
			t.Errorf("query %q does not end in a prefix of one to three letters of a title word", q)
		}
		lengths[n]++
		if len(terms) == 2 {
			two++
		} else if len(terms) != 1 {
			t.Errorf("query %q has %d terms, want 1 or 2", q, len(terms))
		}
	}
	if lengths[1] < 50 || lengths[2] < 50 || lengths[3] < 50 || two < 100 || two > 200 {
		t.Errorf("prefix lengths %v, %d of %d queries with two terms: want every length and about half with two", lengths, two, len(qs))
	}
}
