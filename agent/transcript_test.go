package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"cairn/agent"
)

// TestTranscript_Bounded feeds a transcript 100 MB of output, in long and
// short lines and in many paragraphs: it keeps a bounded number of bytes,
// and still the right tail and last paragraph.
func TestTranscript_Bounded(t *testing.T) {
	var tr agent.Transcript
	long := strings.Repeat("x", 64<<10)
	fed := 0
	for i := 0; fed < 100<<20; i++ {
		line := fmt.Sprintf("line %d of the chatter", i)
		switch {
		case i%1000 == 0:
			line = ""
		case i%777 == 0:
			line = long
		}
		tr.Line("stdout", line)
		tr.Line("stderr", "progress "+line)
		fed += 2*len(line) + len("progress ")
	}
	tr.Line("stdout", "")
	tr.Line("stdout", "Wrote the Fabriano page")
	tr.Line("stdout", "and linked it from the index.")
	tr.Line("stderr", "done")

	if got, limit := tr.Retained(), 200<<10; got > limit {
		t.Errorf("Retained() = %d bytes after %d MB of output, want at most %d", got, fed>>20, limit)
	}
	if got, want := tr.Summary(), "Wrote the Fabriano page and linked it from the index."; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	tail := strings.Split(tr.Tail(), "\n")
	if len(tail) != 40 || tail[len(tail)-1] != "done" || tail[len(tail)-2] != "and linked it from the index." {
		t.Errorf("Tail() = %d lines ending %q, want 40 ending with the last lines", len(tail), tail[max(0, len(tail)-2):])
	}
	for _, l := range tail {
		if len(l) > 1<<10 {
			t.Errorf("Tail() holds a line of %d bytes, want at most 1 KiB", len(l))
		}
	}
}

func TestTranscript_Summary(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"None", nil, ""},
		{"Blank", []string{"", "  ", ""}, ""},
		{"LastParagraph", []string{"Reading the source.", "", "Updated the ink page", "  and the index.  ", "", ""}, "Updated the ink page and the index."},
		{"Long", []string{strings.Repeat("word ", 1000)}, strings.TrimSpace(strings.Repeat("word ", 1000))[:2000-len("…")] + "…"},
		{"Cut", []string{strings.Repeat("é", 1500)}, strings.Repeat("é", 998) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tr agent.Transcript
			for _, l := range tt.lines {
				tr.Line("stdout", l)
			}
			tr.Line("stderr", "stderr is never the summary")
			if got := tr.Summary(); got != tt.want {
				t.Errorf("Summary() = %q, want %q", got, tt.want)
			}
		})
	}
}
