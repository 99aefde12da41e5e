package app_test

import (
	"testing"

	"cairn"
	"cairn/app"
)

// TestEdits: the edits write_page's siblings make, on the text of a page.
func TestEdits(t *testing.T) {
	page := "---\ntitle: Ink\ntype: concept\n---\n# Ink\n\nIntro.\n\n## Recipe\n\nOld recipe.\n\n### Detail\n\nKept? No: under Recipe.\n\n## History\n\nStays.\n"
	got, err := app.ReplaceSection("ink.md", []byte(page), app.SectionEdit{Heading: "recipe", Content: "Linseed oil and soot."})
	want := "---\ntitle: Ink\ntype: concept\n---\n# Ink\n\nIntro.\n\n## Recipe\n\nLinseed oil and soot.\n\n## History\n\nStays.\n"
	if err != nil || string(got) != want {
		t.Errorf("ReplaceSection = %q, %v\nwant %q", got, err, want)
	}
	if _, err := app.ReplaceSection("ink.md", []byte(page), app.SectionEdit{Heading: "Nope"}); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("a missing heading: %v, want not found", err)
	}
	got, err = app.SetField("ink.md", []byte(page), "updated", "2026-12-01", false)
	if want := "---\ntitle: Ink\ntype: concept\nupdated: \"2026-12-01\"\n---\n# Ink\n"; err != nil || string(got[:len(want)]) != want {
		t.Errorf("SetField = %q, %v", got, err)
	}
	got, err = app.SetField("ink.md", got, "type", nil, true)
	if want := "---\ntitle: Ink\nupdated: \"2026-12-01\"\n---\n"; err != nil || string(got[:len(want)]) != want {
		t.Errorf("SetField remove = %q, %v", got, err)
	}
	got, err = app.SetField("plain.md", []byte("# Plain\n"), "tags", []any{"a", "b"}, false)
	if want := "---\ntags:\n  - a\n  - b\n---\n# Plain\n"; err != nil || string(got) != want {
		t.Errorf("SetField on a page without frontmatter = %q, %v", got, err)
	}
	if _, err := app.SetField("ink.md", []byte(page), "nope", nil, true); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("removing a missing field: %v", err)
	}
	if _, err := app.ReplaceText("ink.md", []byte("a a a"), "a", "b", 2); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("a text that occurs 3 times, said 2: %v", err)
	}
	if got, err := app.ReplaceText("ink.md", []byte("a a a"), "a", "b", 3); err != nil || string(got) != "b b b" {
		t.Errorf("ReplaceText = %q, %v", got, err)
	}
	if got := app.AppendText([]byte("no newline"), "more"); string(got) != "no newline\nmore\n" {
		t.Errorf("AppendText = %q", got)
	}
}
