package markdown

import "bytes"

// Parts is a page cut into its frontmatter and body, byte for byte:
// Head + YAML + Tail + Body reproduces the source.
type Parts struct {
	Head  []byte // an optional UTF-8 byte order mark and the opening "---" line
	YAML  []byte // the frontmatter text between the delimiter lines
	Tail  []byte // the closing "---" (or "...") line, with its line ending
	Body  []byte // everything after the closing line
	Found bool   // whether the page has a frontmatter block at all
}

var bom = []byte("\xef\xbb\xbf")

// Split cuts src into frontmatter and body. A frontmatter block starts on the
// first line (after an optional byte order mark) with "---" and ends at the
// next line that is "---" or "..."; trailing spaces and CRLF line endings are
// allowed on both. Without a closing line there is no frontmatter and the
// whole source is the body.
func Split(src []byte) Parts {
	rest := src
	n := 0
	if bytes.HasPrefix(rest, bom) {
		n = len(bom)
		rest = rest[n:]
	}
	line, next := cutLine(rest)
	if !isDelimiter(line, false) || next == len(rest) && !bytes.HasSuffix(rest, []byte("\n")) {
		return Parts{Body: src}
	}
	head := n + next
	pos := head
	for pos < len(src) {
		line, adv := cutLine(src[pos:])
		if isDelimiter(line, true) {
			return Parts{
				Head:  src[:head],
				YAML:  src[head:pos],
				Tail:  src[pos : pos+adv],
				Body:  src[pos+adv:],
				Found: true,
			}
		}
		pos += adv
	}
	return Parts{Body: src}
}

// cutLine returns the first line of b without its line ending, and the
// number of bytes up to and including the line ending.
func cutLine(b []byte) (line []byte, advance int) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, len(b)
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), i + 1
}

func isDelimiter(line []byte, closing bool) bool {
	line = bytes.TrimRight(line, " \t")
	return string(line) == "---" || closing && string(line) == "..."
}
