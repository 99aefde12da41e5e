// Package vaultgen generates realistic vaults for cairn's benchmarks and
// tests: Eva-style folders of Markdown pages with YAML frontmatter, sections,
// lists, the odd code block and wikilinks in every form cairn resolves, plus
// index.md, log.md and, on request, the raw/ sources that summaries cite.
//
// Realism is the point. Every performance target is measured on generated
// vaults of 1k, 10k and 100k pages, and a toy vault makes those figures
// meaningless: a 20-word vocabulary turns every search into a full scan and
// every index into a handful of enormous posting lists. So pages are ~2 KB
// (1–4 KB), their words follow Zipf's law (s = 1.07) over a 30,000-word
// vocabulary of pronounceable pseudo-words topped by real English function
// words, each page links to 3–7 others (5 on average) preferring popular and
// nearby pages so backlink counts are skewed, and titles are unique so that
// every link resolves.
//
// Output is a pure function of [Config]: the same config gives the same bytes
// on every machine and Go version. Randomness comes from PCG streams keyed by
// (seed, page, purpose), so [Vault.Page] builds one page without building the
// others, and the Zipf tables are computed with plain IEEE arithmetic (no
// math.Pow, no fused multiply-add) so they cannot drift between platforms.
//
// A Vault is cheap to create (titles and link tables only, a quarter of a
// second for 100k pages) and generates file contents on demand: stream them with
// [Vault.Files], collect them with slices.Collect, or write them to a folder
// with [Vault.WriteDir].
package vaultgen
