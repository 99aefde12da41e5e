package main

import (
	"fmt"
	"io"
	"strings"

	"cairn"
)

// conflictList is the JSON shape of refused merges.
func conflictList(cs []cairn.Conflict) list {
	type item struct {
		ID string `json:"id"`
		cairn.Conflict
	}
	var out []item
	for i, c := range cs {
		id := fmt.Sprintf("%s#%d", c.Path, i)
		if c.Field != "" {
			id = c.Path + "#" + c.Field
		}
		out = append(out, item{ID: id, Conflict: c})
	}
	l := items(out)
	l["refused"] = true
	return l
}

func printConflicts(w io.Writer, cs []cairn.Conflict) {
	for _, c := range cs {
		switch {
		case c.Field != "":
			fmt.Fprintf(w, "  %s: %s conflict in field %q: ours %q, theirs %q (base %q)\n", c.Path, c.Kind, c.Field, c.Ours, c.Theirs, c.Base)
		case c.Lines != nil:
			fmt.Fprintf(w, "  %s: %s conflict at lines %d-%d (ours) / %d-%d (theirs)\n", c.Path, c.Kind,
				c.Lines.Ours.Start, c.Lines.Ours.Start+max(c.Lines.Ours.Count-1, 0),
				c.Lines.Theirs.Start, c.Lines.Theirs.Start+max(c.Lines.Theirs.Count-1, 0))
			for _, side := range []struct{ name, text string }{{"ours", c.Ours}, {"theirs", c.Theirs}} {
				for _, line := range strings.Split(strings.TrimRight(side.text, "\n"), "\n") {
					fmt.Fprintf(w, "      %-6s | %s\n", side.name, line)
				}
			}
		default:
			fmt.Fprintf(w, "  %s: %s conflict (ours: %s; theirs: %s)\n", c.Path, c.Kind, cmpOr(c.Ours, "changed"), cmpOr(c.Theirs, "changed"))
		}
	}
}

// plural writes "1 file" or "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
