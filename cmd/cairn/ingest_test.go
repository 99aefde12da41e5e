package main

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"cairn"
)

// TestIngest_ActivityClean runs cairn ingest with a command agent whose
// output holds terminal escape sequences (a clipboard write, a window
// title, colours), invisible characters and a long line of two-byte
// characters: what ingest prints of it reaches the terminal as plain,
// valid text, each line cut at a whole character.
func TestIngest_ActivityClean(t *testing.T) {
	hidden := "\u202E\u200B"
	for _, r := range "IGNORE" {
		hidden += string(0xe0000 + r)
	}
	agent := `printf '\033]52;c;cm0gLXJmIH4K\007clipboard\n'
printf '\033]0;a new title\007title\n'
printf '\033[1;31mred\033[0m and \033[2Kcleared\n'
echo 'hidden` + hidden + ` text'
echo 'a` + strings.Repeat("é", 150) + `'
echo failing on purpose
exit 3
`
	_, vault, sources := ingestVault(t, agent)
	r := run(t, vault, nil, "ingest", sources[0])
	if r.code != exitRefused {
		t.Fatalf("cairn ingest with a failing agent: exit %d, want %d\n%s%s", r.code, exitRefused, r.stdout, r.stderr)
	}
	if strings.ContainsAny(r.stdout, "\x1b\x07") || !utf8.ValidString(r.stdout) {
		t.Errorf("cairn ingest printed escape sequences or invalid UTF-8:\n%q", r.stdout)
	}
	prev := rune(-1)
	for _, c := range r.stdout {
		if cairn.IsInvisible(prev, c) {
			t.Errorf("cairn ingest printed the invisible character %U:\n%q", c, r.stdout)
		}
		prev = c
	}
	for _, want := range []string{"│ clipboard\n", "│ title\n", "│ red and cleared\n", "│ hidden text\n", "│ a" + strings.Repeat("é", 98) + "…\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("cairn ingest's output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestIngest_VariationSelectorName ingests a file whose name holds
// variation selectors that follow no emoji, so that it reads as notes.md:
// it is refused at the door with a hint, and nothing prints the name as
// it is.
func TestIngest_VariationSelectorName(t *testing.T) {
	root, vault, _ := ingestVault(t, "")
	name := "notes\U000E0100\U000E0101.md"
	writeFiles(t, root, map[string]string{name: "# Notes\n\nPaper was made from rags in mills.\n"})
	r := run(t, vault, nil, "ingest", filepath.Join(root, name))
	if r.code != exitRefused || !strings.Contains(r.stdout, "refused  ") || !strings.Contains(r.stdout, "Hint: ") {
		t.Fatalf("cairn ingest %q: exit %d, want %d, refused with a hint\n%s%s", name, r.code, exitRefused, r.stdout, r.stderr)
	}
	sh := run(t, vault, nil, "sources", "show", name)
	must(t, sh, "sources show")
	for _, out := range []string{r.stdout, sh.stdout} {
		if strings.ContainsRune(out, 0xe0100) || !strings.Contains(out, `notes\U000e0100\U000e0101.md`) {
			t.Errorf("the output holds U+E0100 as it is, or not the name escaped:\n%s", out)
		}
	}
}

// TestIngest_FailureHint: a source that fails while cairn ingest runs its
// job is printed with its hint, as cairn sources show prints it.
func TestIngest_FailureHint(t *testing.T) {
	_, vault, sources := ingestVault(t, "echo failing on purpose\nexit 3")
	r := run(t, vault, nil, "ingest", sources[0])
	if r.code != exitRefused {
		t.Fatalf("cairn ingest with a failing agent: exit %d, want %d\n%s%s", r.code, exitRefused, r.stdout, r.stderr)
	}
	src := sourcesOf(t, vault)[0]
	sh := run(t, vault, nil, "sources", "show", src.ID)
	must(t, sh, "sources show")
	hint := ""
	for _, line := range strings.Split(sh.stdout, "\n") {
		if h, ok := strings.CutPrefix(line, "hint     "); ok {
			hint = h
		}
	}
	if hint == "" {
		t.Fatalf("cairn sources show prints no hint:\n%s", sh.stdout)
	}
	if want := "source-0.md: failed: " + src.Error + "\n  Hint: " + hint + "\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("cairn ingest's output lacks %q:\n%s", want, r.stdout)
	}
}
