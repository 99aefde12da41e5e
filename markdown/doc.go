// Package markdown reads pages the way Obsidian users write them: YAML
// frontmatter, wikilinks and embeds, headings and block ids, and relative
// Markdown links, none of them inside code. It never fails on bad input: a
// page with malformed YAML or invalid UTF-8 is still a page, with problems
// reported beside it.
package markdown
