package markdown

import "bytes"

// PlainText returns the text of a page for full-text indexing: the body
// without frontmatter, comments ("%%" and HTML), fence delimiter lines and
// link syntax. A wikilink becomes its label, or its target (with heading)
// when it has none; a Markdown link or image becomes its label or alt text,
// the destination dropped. Code is kept: people search for it. Other
// Markdown punctuation ('#', '*', '>', '|') is left to the tokenizer. Like
// Parse, it never fails and runs in linear time.
func PlainText(src []byte) string {
	parts := Split(src)
	start := len(src) - len(parts.Body)
	if !parts.Found && bytes.HasPrefix(src, bom) {
		start = len(bom)
	}
	s := scanner{src: src, text: true, out: make([]byte, 0, len(src)-start)}
	s.scanBody(start, 1)
	return string(s.out)
}
