package markdown_test

import (
	"testing"

	"cairn/markdown"

	"github.com/google/go-cmp/cmp"
)

// TestFastFrontmatter checks the hand-written YAML reader against yaml.v3
// on the forms it must accept (the fast path is what makes Parse fast) and
// on near misses it may decline. FuzzFrontmatter does the same at random.
func TestFastFrontmatter(t *testing.T) {
	t.Parallel()
	accept := []string{
		"title: Attention Is All You Need\ntype: summary\nsource: raw/attention.pdf\nupdated: 2024-03-01\n",
		"aliases: [Transformer paper, 'Vaswani, 2017', \"V17\"]\ntags:\n  - ml\n  - nlp\n",
		"aliases: a, b\nsources: raw/a.md, raw/b.md\nalias: 'q'\n",
		"related: [\"[[x]]\", y]\nup: \"[[Parent#h|p]]\"\nnotes:\n  - 'see [[z|w]] and ![[i.png]]'\n",
		"a: x:y\nb: x  y\nc: [ \"x\" , y ]\nd: [x y]\ne: say \"hi\"\nf: b::c\ng: it's\nh: x,y\n",
		"a b: c\na-: c\na.b: c\n_a: 1\n0: 2\n9x: 3\ntrue: 1\n",
		"a:\n  - x\n  -  y\nb:\n- z\nc:\nd: # comment\n  - 1\n  # comment\n  - 2\n",
		"t: True\ny: yes\no: on\nn: NULL\nz: 0\nbig: 123456789012345678\nd: 9999-99-99\ne: ''\nf: \"\"\n",
		"a: \u00a0x\u00a0\nb: =x\nc: /x\nd: (x)\ne: \\x\nf: ~\ng: ~x\nh: [~]\ni: ['a''b', \"c\"]\nj: é\nk: 値\n",
		"a: x\n  # indented comment\nb: y\n\n\n# trailing comment\n",
		"a: [b, 'c, d', \"e]\"]\nb: x]\nc: x[\nd: x{}\ne: '#x'\nf: \"[[x]]\" # c\n",
		"key: value\r\nlist:\r\n  - a\r\n",
	}
	decline := []string{
		"a: b\n c", "a: @x", "a: b # c", "a: |\n  x", "a: &x 1\nb: *x", "a: {b: c}", "a:\n  b: c", "a: 1.5", "a: -1",
		"a: 0x1F", "a: 007", "a: \"\\u00e9\"", "a:\tb", "a: [b,]", "a: [b\n, c]", "a: 1\na: 2", "- x", "x", "a: b: c",
		"? a\n: b", "a: !!str 1", "<<: {a: b}", "null: x", "a: 'x'y", "a: [x]#c", "a:\n  - [x]", "a:\n  -",
	}
	for _, y := range accept {
		fast, ok := markdown.FastFrontmatter([]byte(y))
		if !ok {
			t.Errorf("FastFrontmatter(%q) declines; it must accept this form", y)
			continue
		}
		if diff := cmp.Diff(markdown.SlowFrontmatter([]byte(y)), fast); diff != "" {
			t.Errorf("FastFrontmatter(%q) disagrees with yaml.v3 (-yaml.v3 +fast):\n%s", y, diff)
		}
	}
	for _, y := range decline {
		if fast, ok := markdown.FastFrontmatter([]byte(y)); ok {
			if diff := cmp.Diff(markdown.SlowFrontmatter([]byte(y)), fast); diff != "" {
				t.Errorf("FastFrontmatter(%q) disagrees with yaml.v3 (-yaml.v3 +fast):\n%s", y, diff)
			}
		}
	}
}
