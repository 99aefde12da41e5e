package extractive_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"cairn/agent"
	"cairn/agent/extractive"
)

// textrankRun extracts a source with no vault around it.
func textrankRun(t *testing.T, source, data string) *extractive.Output {
	t.Helper()
	out, err := extractive.Extract(extractive.Input{Source: agent.SourceDoc{Path: source, Data: []byte(data)}, Date: extractDate})
	if err != nil {
		t.Fatalf("Extract(%q) error: %v", data, err)
	}
	return out
}

func TestTextRank_CentralSentence(t *testing.T) {
	central := "Bees, ants, wasps and termites are social insects that live together in large colonies."
	text := strings.Join([]string{
		"Bees make honey from the nectar of flowers.",
		"The weather was cold in January.",
		"Ants farm aphids and cut leaves.",
		central,
		"Wasps build paper nests from chewed wood.",
		"My neighbour repaired his old bicycle.",
		"Termites digest wood with the help of microbes.",
		"Colonies of social insects divide their labour.",
		"The train left the station on time.",
	}, " ")
	out := textrankRun(t, "raw/insects.md", "# Insects\n\n"+text+"\n")
	if !slices.Contains(out.Passages, central) {
		t.Errorf("Passages = %q, want the central sentence among them", out.Passages)
	}
	// The index line describes the summary with its best passage.
	line := extractIndexLine(t, out, "summaries/index.md")
	if want := " — " + central; !strings.HasSuffix(line, want) {
		t.Errorf("index line = %q, want it to end %q", line, want)
	}
	for _, p := range out.Passages {
		if strings.Contains(p, "bicycle") || strings.Contains(p, "train") || strings.Contains(p, "weather") {
			t.Errorf("Passages = %q: an unrelated sentence was chosen", out.Passages)
		}
	}
	// Passages come in document order.
	var at []int
	for _, p := range out.Passages {
		at = append(at, strings.Index(text, p))
	}
	if !slices.IsSorted(at) {
		t.Errorf("Passages = %q, not in document order", out.Passages)
	}
}

func TestTextRank_Sentences(t *testing.T) {
	tests := []struct {
		name, source, data string
		want               []string
	}{
		{
			name:   "Abbreviations",
			source: "raw/a.md",
			data: "Aldus Manutius (c. 1450-1515) printed Greek, e.g. Aristotle, i.e. philosophy. " +
				"Mr. Smith met J. R. R. Tolkien at 3.5 p.m. on a Monday! Did the end come quickly? It did.",
			want: []string{
				"Aldus Manutius (c. 1450-1515) printed Greek, e.g. Aristotle, i.e. philosophy.",
				"Mr. Smith met J. R. R. Tolkien at 3.5 p.m. on a Monday!",
				"Did the end come quickly? It did.",
			},
		},
		{
			name:   "QuotesAndEllipsis",
			source: "raw/a.md",
			data:   "He wrote \"festina lente.\" The motto stayed... Readers knew it (as did printers.)",
			want: []string{
				"He wrote \"festina lente.\"",
				"The motto stayed...",
				"Readers knew it (as did printers.)",
			},
		},
		{
			name:   "ListItems",
			source: "raw/a.md",
			data:   "- Capital. Merchants financed long ventures\n- Trade carried books across Europe\n1. Paper came from the mainland mills\n",
			want: []string{
				"Capital. Merchants financed long ventures",
				"Trade carried books across Europe",
				"Paper came from the mainland mills",
			},
		},
		{
			name:   "SkippedBlocks",
			source: "raw/a.md",
			data: "---\ntitle: Notes\nsummary: Frontmatter is no text.\n---\n# A heading is no text\n\nThe first real sentence is here.\n\n" +
				"```go\nfmt.Println(\"code is no text.\")\n```\n\n    indented code is no text.\n\n| table | no |\n|---|---|\n| cells are | no text. |\n\n" +
				"<div>\nHTML is no text.\n</div>\n\n***\n\nSetext headings are no text\n---\n\n<!--\nComments are no text.\n-->\n\n" +
				"%%\nObsidian comments are no text.\n%%\n\n> ```\n> quoted code is no text.\n> ```\n> The second real sentence is quoted.\n\n<span>Note:</span> inline tags are text.\n\n<section>\nBlock tags are no text.\n</section>\n",
			want: []string{"The first real sentence is here.", "The second real sentence is quoted.", "Note: inline tags are text."},
		},
		{
			name:   "Plain",
			source: "raw/a.txt",
			data: "A TITLE IN CAPITALS\n\n1. A SECTION HEADING\n\nThe first sentence spans\ntwo lines. The second follows it.\n\n" +
				"Short heading\n\n- An item of a list\n  continued on a second line\n",
			want: []string{"The first sentence spans two lines.", "The second follows it.", "An item of a list continued on a second line"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := textrankRun(t, tt.source, tt.data)
			if diff := cmp.Diff(tt.want, out.Passages); diff != "" {
				t.Errorf("Passages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTextRank_PassageCount(t *testing.T) {
	for _, tt := range []struct{ sentences, want int }{{1, 1}, {2, 2}, {3, 3}, {9, 3}, {16, 4}, {30, 5}, {42, 6}, {49, 7}, {200, 7}} {
		t.Run(fmt.Sprint(tt.sentences), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("# Count\n\n")
			for i := range tt.sentences {
				fmt.Fprintf(&b, "Sentence number %d talks about printing and topic%d in detail. ", i, i)
			}
			if out := textrankRun(t, "raw/count.md", b.String()); len(out.Passages) != tt.want {
				t.Errorf("%d sentences give %d passages, want %d", tt.sentences, len(out.Passages), tt.want)
			}
		})
	}
}

func TestTextRank_LongSentence(t *testing.T) {
	long := "The press " + strings.Repeat("printed another sheet of the book, ", 20) + "and the shop closed."
	out := textrankRun(t, "raw/long.md", long)
	if len(out.Passages) != 1 {
		t.Fatalf("Passages = %q, want one", out.Passages)
	}
	p := out.Passages[0]
	if n := utf8.RuneCountInString(p); n > 400 || n < 350 {
		t.Errorf("passage of %d characters, want at most 400 and not much less", n)
	}
	head, ok := strings.CutSuffix(p, "…")
	if !ok || !strings.HasPrefix(long, head) || long[len(head)] != ' ' && long[len(head)] != ',' {
		t.Errorf("passage %q is not the sentence cut at a word boundary with …", p)
	}
}

func TestTextRank_Terms(t *testing.T) {
	text := "# Type\n\nGutenberg cast movable type in metal. Movable type made printing fast. " +
		"Each piece of movable type carried one letter. Printers set movable type by hand. " +
		"Metal letters lasted longer than wooden letters. The hand mould cast letters quickly.\n"
	out := textrankRun(t, "raw/type.md", text)
	if !slices.Contains(out.Terms, "movable type") {
		t.Errorf("Terms = %q, want movable type among them", out.Terms)
	}
	if len(out.Terms) == 0 || len(out.Terms) > 8 {
		t.Errorf("Terms = %q, want 1 to 8", out.Terms)
	}
	for _, term := range out.Terms {
		if term != strings.ToLower(term) {
			t.Errorf("term %q is not lower case", term)
		}
		for _, w := range strings.Fields(term) {
			if slices.Contains([]string{"the", "in", "of", "by", "than"}, w) {
				t.Errorf("term %q holds the stopword %q", term, w)
			}
		}
	}
	if slices.Contains(out.Terms, "type") || slices.Contains(out.Terms, "movable") {
		t.Errorf("Terms = %q, repeat a word of a phrase", out.Terms)
	}
}
