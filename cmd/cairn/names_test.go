package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvisibleNames checks that no route lets a name with an invisible
// character (a bidirectional override, a zero-width space) into the vault:
// not a commit from the folder, not an import, not a source. Each is left
// out or refused with the reason, and the rest goes on.
func TestInvisibleNames(t *testing.T) {
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n\n- [[ok]]\n- [[fine]]\n", "log.md": "# Log\n"})
	must(t, run(t, vault, nil, "init"), "init")

	// A commit: the page whose name shows as "invoicedm.pdf" is left out.
	bidi := "invoice\u202Efdp.md"
	writeFiles(t, vault, map[string]string{bidi: "# Report\n", "ok.md": "# OK\n"})
	c := run(t, vault, nil, "commit", "-m", "two pages")
	must(t, c, "commit")
	st := run(t, vault, nil, "status")
	// An import: likewise the zero-width space.
	zw := "fine\u200B.md"
	writeFiles(t, filepath.Join(root, "in"), map[string]string{zw: "# Zero width\n", "fine.md": "# Fine\n"})
	im := run(t, vault, nil, "import", "../in")
	must(t, im, "import")
	// What is left out is listed with its name quoted, never as it is.
	for _, out := range []string{c.stdout + c.stderr, st.stdout + st.stderr, im.stdout + im.stderr} {
		if strings.ContainsAny(out, "\u202E\u200B") || !strings.Contains(out, "Left out") {
			t.Errorf("a list of what was left out holds an invisible character as it is, or no list:\n%s", out)
		}
	}
	for _, p := range []string{"ok.md", "fine.md"} {
		must(t, run(t, vault, nil, "show", p), "show "+p)
	}
	for _, p := range []string{bidi, zw} {
		if r := run(t, vault, nil, "show", p); r.code == 0 {
			t.Errorf("cairn show %q found it on main:\n%s", p, r.stdout)
		}
	}

	// A source: refused at the door with the reason and a hint.
	src := filepath.Join(root, "notes\u2066.md")
	if err := os.WriteFile(src, []byte("# Notes\n\nPaper was made from rags in mills.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, vault, nil, "ingest", src)
	if r.code != exitRefused {
		t.Errorf("ingest of %q: exit %d, want %d\n%s%s", src, r.code, exitRefused, r.stdout, r.stderr)
	}
	// Nothing prints the name as it is: it would reorder the line.
	l := run(t, vault, nil, "sources")
	sh := run(t, vault, nil, "sources", "show", "notes\u2066.md")
	for _, out := range []string{r.stdout, r.stderr, l.stdout, sh.stdout, sh.stderr} {
		if strings.ContainsRune(out, '\u2066') {
			t.Errorf("output holds U+2066 as it is:\n%s", out)
		}
	}
	r = run(t, vault, nil, "sources", "--json")
	must(t, r, "sources")
	var out struct {
		Items []struct {
			Status, Path, Hint string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0].Status != "failed" || out.Items[0].Path != "" || out.Items[0].Hint == "" {
		t.Errorf("the source with U+2066 in its name: %+v, want one failed source, not stored, with a hint", out.Items)
	}
	if d := run(t, vault, nil, "doctor"); d.code != 0 {
		t.Errorf("doctor:\n%s%s", d.stdout, d.stderr)
	}
}
