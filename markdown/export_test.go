package markdown

// Hooks for the external tests: the two frontmatter readers, so
// FuzzFrontmatter can check that the fast one agrees with yaml.v3.

// FrontmatterResult is what a frontmatter reader yields, for comparison.
type FrontmatterResult struct {
	Values map[string]any
	Plain  map[string]bool
	Links  []Link
	Err    string
}

func result(fm frontmatter) FrontmatterResult {
	return FrontmatterResult{Values: fm.values, Plain: fm.plain, Links: fm.links, Err: fm.err}
}

// FastFrontmatter runs the hand-written reader; ok is false when it
// declines the input.
func FastFrontmatter(yaml []byte) (FrontmatterResult, bool) {
	fm, ok := fastFrontmatter(fmSource{yaml: yaml, line: 2, offset: 4, path: "p.md"})
	return result(fm), ok
}

// SlowFrontmatter runs the yaml.v3 reader.
func SlowFrontmatter(yaml []byte) FrontmatterResult {
	return result(slowFrontmatter(fmSource{yaml: yaml, line: 2, offset: 4, path: "p.md"}))
}

// HeadingKey is the normalization HasHeading matches by.
var HeadingKey = headingKey
