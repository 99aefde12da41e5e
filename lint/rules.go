package lint

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"cairn/markdown"
)

// Kind classifies a vault file for linting and linking.
type Kind int

// File kinds.
const (
	// KindPage is a Markdown page of the wiki.
	KindPage Kind = iota + 1
	// KindAttachment is any other file a page may link to or embed.
	KindAttachment
	// KindSource is a file under raw/: an immutable source, never a page.
	KindSource
	// KindContract is the vault's contract and bookkeeping at the root:
	// cairn.yaml, and in Eva vaults eva.json, EVA.md, AGENTS.md, CLAUDE.md;
	// and log.md. Not pages, not linted.
	KindContract
	// KindHidden is a file with a path segment starting with '.'
	// (.gitignore, .obsidian/...): configuration, not linted.
	KindHidden
)

var contractFiles = []string{"cairn.yaml", "eva.json", "eva.md", "agents.md", "claude.md", "log.md"}

// Classify returns the kind of the file at a vault path.
func Classify(p string) Kind {
	if strings.HasPrefix(p, ".") || strings.Contains(p, "/.") {
		return KindHidden
	}
	// An ASCII path is compared without a lower-case copy (lint's clash
	// facts classify every other page of a shared id, for every such
	// page); EqualFold is ToLower's comparison there. Other paths are
	// lower-cased as Unicode does (İ is i), which EqualFold is not.
	lower, ascii := p, true
	for i := 0; i < len(p) && ascii; i++ {
		ascii = p[i] < utf8.RuneSelf
	}
	is := strings.EqualFold
	if !ascii {
		lower, is = strings.ToLower(p), func(a, b string) bool { return a == b }
	}
	switch {
	case len(lower) >= 4 && is(lower[:4], "raw/"):
		return KindSource
	case slices.ContainsFunc(contractFiles, func(c string) bool { return is(lower, c) }):
		return KindContract
	case len(lower) >= 3 && is(lower[len(lower)-3:], ".md"):
		return KindPage
	}
	return KindAttachment
}

// DefaultAttachmentFolders are the folder names where files of any type are
// expected, at any depth.
var DefaultAttachmentFolders = []string{"attachments", "assets", "images", "img", "media", "files", "resources", "_resources"}

// mediaExt are the file types Obsidian shows itself; outside attachment
// folders they get an info, anything else a warning.
var mediaExt = []string{
	".png", ".jpg", ".jpeg", ".gif", ".bmp", ".svg", ".webp", ".avif", ".ico",
	".mp3", ".wav", ".m4a", ".ogg", ".3gp", ".flac", ".webm", ".mp4", ".ogv", ".mov", ".mkv",
	".pdf", ".canvas", ".base",
}

// Config says how strict a vault is. The zero value suits a plain Obsidian
// vault.
type Config struct {
	// Contract is set when the vault's contract asks for strict lint: an
	// Eva brain (eva.json at the root), or a cairn.yaml whose lint.strict
	// is true (Settings). Pages must then have a title and a type, and
	// orphans are warnings, not infos. A cairn.yaml that says nothing
	// about lint changes nothing.
	Contract bool
	// AttachmentFolders are folder names (at any depth) where files of any
	// type belong. Default DefaultAttachmentFolders.
	AttachmentFolders []string
	// Types checks pages against the types the vault declares
	// (schema.Set); nil when it declares none.
	Types TypeChecker
	// DeclaredTypes is set when the vault asks that every page's type be
	// declared (Settings.Types): one that is not gets an info.
	DeclaredTypes bool
}

// TypeChecker checks files against the vault's declared types: a page
// against its type's schema, a declaration against the rules of
// declarations. Its findings have the schema rules' ids (SchemaRules).
type TypeChecker interface {
	Check(f *Facts) []Finding
	// HasType reports whether the vault declares the type name.
	HasType(name string) bool
	// LinkFields returns the frontmatter properties of a page of type t
	// whose links must lead to a page of a given type: the types of the
	// pages they lead to go in Facts.LinkTypes.
	LinkFields(t string) []string
}

// TypesFolder is where a vault declares its types: types/<name>.md, or
// types/<name>.yaml.
const TypesFolder = "types/"

// TypeDeclaration reports whether the file at path declares a type, and
// the type's name: a .md, .yaml or .yml file directly in types/. The name
// is the file name without its extension, exactly as written.
func TypeDeclaration(p string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(p, TypesFolder)
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return "", false
	}
	ext := path.Ext(rest)
	switch strings.ToLower(ext) {
	case ".md", ".yaml", ".yml":
		name = strings.TrimSuffix(rest, ext)
		return name, name != ""
	}
	return "", false
}

// Settings are what a vault's cairn.yaml says about lint, under its lint
// key; the admission policy reads and validates the same key. The zero
// value is the default.
type Settings struct {
	// Strict asks for the severities of Config.Contract. Default false;
	// an Eva brain is strict whatever it says.
	Strict bool `yaml:"strict,omitempty"`
	// Types is "declared" when every page's type must be declared in
	// types/ (an info for one that is not); "" leaves the world open.
	Types string `yaml:"types,omitempty"`
}

// TypesDeclared is the value of Settings.Types that asks for declared
// types.
const TypesDeclared = "declared"

// Link is a page's link with where it leads.
type Link struct {
	markdown.Link
	Res markdown.Resolution
}

// Clash is a title or alias (or id) of a page that other pages answer to as
// well.
type Clash struct {
	Value string   // as the page writes it
	With  []string // the other pages' paths, sorted: the first of them
	More  int      // how many other pages With leaves out
}

// Facts is everything the rules need to know about one file.
type Facts struct {
	Path string
	Kind Kind
	// Page is the parsed page, for KindPage files.
	Page *markdown.Page
	// Links are the page's links, with their resolutions.
	Links []Link
	// Inbound counts resolved links from other pages to this file.
	Inbound int
	// HasIndex is set when the vault has a root index.md page.
	HasIndex bool
	// Reachable is set when the page can be reached from index.md by
	// following links.
	Reachable bool
	// TitleClashes are this page's title and aliases that other pages
	// answer to as titles or aliases.
	TitleClashes []Clash
	// IDClashes are other pages whose id equals this page's, ignoring
	// case, sorted: the first of them; MoreIDClashes counts the others.
	IDClashes     []string
	MoreIDClashes int
	// MissingSources are the entries of source/sources naming no file or
	// page.
	MissingSources []string
	// LinkTypes are the types of the pages that the page's links in its
	// type's link fields (TypeChecker.LinkFields) lead to, by path; a page
	// without a type maps to "".
	LinkTypes map[string]string
}

var misplacedRoots = []string{"private", "var", "tmp", "usr", "etc", "opt", "home", "users", "library", "system", "volumes"}

// Check returns the findings for one file, sorted.
func Check(f *Facts, cfg *Config) []Finding {
	if cfg == nil {
		cfg = &Config{}
	}
	var out []Finding
	add := func(rule string, sev Severity, subject, format string, args ...any) {
		out = append(out, Finding{Rule: rule, Severity: sev, Page: f.Path, Subject: subject, Message: fmt.Sprintf(format, args...)})
	}
	if first, _, ok := strings.Cut(f.Path, "/"); ok && slices.Contains(misplacedRoots, strings.ToLower(first)) && f.Kind != KindHidden {
		add(MisplacedPage, Error, f.Path, "%s recreates an absolute file system path (/%s/...) inside the vault: likely an agent writing to a hallucinated location; reject the change", f.Path, first)
	}
	switch f.Kind {
	case KindAttachment:
		if _, decl := TypeDeclaration(f.Path); !decl {
			checkAttachment(f, cfg, add)
		}
	case KindPage:
		checkPage(f, cfg, add)
	}
	if cfg.Types != nil && (f.Kind == KindPage || f.Kind == KindAttachment) {
		out = append(out, cfg.Types.Check(f)...)
	}
	Sort(out)
	return out
}

type addFunc func(rule string, sev Severity, subject, format string, args ...any)

func checkAttachment(f *Facts, cfg *Config, add addFunc) {
	folders := cfg.AttachmentFolders
	if folders == nil {
		folders = DefaultAttachmentFolders
	}
	dir := path.Dir(f.Path)
	for _, seg := range strings.Split(dir, "/") {
		if slices.Contains(folders, strings.ToLower(seg)) {
			return
		}
	}
	ext := strings.ToLower(path.Ext(f.Path))
	if slices.Contains(mediaExt, ext) {
		add(NonMarkdownFile, Info, "", "%s is an attachment outside the attachment folders (%s) and raw/", f.Path, strings.Join(folders, ", "))
		return
	}
	add(NonMarkdownFile, Warning, "", "%s is not Markdown and not an attachment (a script, executable or data file?); it belongs in raw/ or an attachment folder", f.Path)
}

func checkPage(f *Facts, cfg *Config, add addFunc) {
	p := f.Page
	for _, pr := range p.Problems {
		switch pr.Kind {
		case markdown.ProblemMalformedFrontmatter:
			add(MalformedFrontmatter, Error, "frontmatter", "the frontmatter is not valid YAML: %s", pr.Message)
		case markdown.ProblemInvalidEncoding:
			add(InvalidEncoding, Error, "", "%s", pr.Message)
		}
	}
	required := Info
	if cfg.Contract {
		required = Warning
	}
	isIndex := p.Type == "index" || strings.EqualFold(f.Path, "index.md")
	// A type's declaration is the vault's vocabulary, not a page of the
	// wiki: its name is its title, and it needs no type and no links to it.
	_, decl := TypeDeclaration(f.Path)
	if p.TitleSource != markdown.TitleFromFrontmatter && !decl {
		add(MissingTitle, required, "title", "the frontmatter has no title (the page shows as %q)", p.Title)
	}
	if p.Type == "" && !decl {
		add(MissingType, required, "type", "the frontmatter has no type")
	}
	if cfg.DeclaredTypes && p.Type != "" && !decl && !isIndex && (cfg.Types == nil || !cfg.Types.HasType(p.Type)) {
		add(UndeclaredType, Info, p.Type, "the type %q is not declared; declare it in %s%s.md (the vault asks for declared types)", p.Type, TypesFolder, p.Type)
	}
	if p.Type == "summary" {
		source, _ := p.Frontmatter["source"].(string)
		switch {
		case strings.TrimSpace(source) == "":
			add(MissingSource, Warning, "source", "a summary must name its source: add source: raw/<file>")
		case !strings.HasPrefix(source, "raw/"):
			add(InvalidSource, Warning, source, "a summary's source must be a file in raw/, not %q", source)
		}
	}
	for _, s := range f.MissingSources {
		add(SourceNotFound, Warning, s, "the source %q names no file or page in the vault", s)
	}
	for _, l := range f.Links {
		subject := linkSubject(l.Link)
		switch l.Res.Status {
		case markdown.StatusBroken:
			add(BrokenLink, Warning, subject, "%s does not lead to any page or file in the vault", l.Raw)
		case markdown.StatusAmbiguous:
			add(AmbiguousLink, Warning, subject, "%s could mean any of %s; link by path to choose one", l.Raw, l.Res.CandidateList())
		case markdown.StatusResolved:
			if l.Res.Chosen() {
				add(AmbiguousLink, Info, subject, "%s could mean any of %s; it leads to %s, the shortest path, as in Obsidian; link by path to choose another", l.Raw, l.Res.CandidateList(), l.Res.Path)
			}
			if l.Res.MissingHeading {
				add(MissingHeading, Warning, subject+"#"+l.Heading, "%s: %s has no heading %q", l.Raw, l.Res.Path, l.Heading)
			}
			if l.Res.MissingBlock {
				add(MissingHeading, Warning, subject+"#^"+l.Block, "%s: %s has no block ^%s", l.Raw, l.Res.Path, l.Block)
			}
		}
	}
	for _, c := range f.TitleClashes {
		add(DuplicateTitle, Warning, c.Value, "%q is also the title or an alias of %s; links by that name are ambiguous", c.Value, markdown.ListPaths(c.With, c.More))
	}
	if len(f.IDClashes) > 0 {
		add(CaseCollision, Error, p.ID, "the id %q is also the id of %s (ignoring case)", p.ID, markdown.ListPaths(f.IDClashes, f.MoreIDClashes))
	}
	if isIndex || decl {
		return
	}
	orphan := Info
	if cfg.Contract || f.HasIndex {
		orphan = Warning
	}
	if f.Inbound == 0 {
		add(Orphan, orphan, "", "no other page links to this page")
	} else if f.HasIndex && !f.Reachable {
		add(Unreachable, Warning, "", "this page cannot be reached from index.md by following links")
	}
}

// linkSubject is what identifies a link in a finding: its target as
// written, or the path it spells.
func linkSubject(l markdown.Link) string {
	switch {
	case l.Target != "":
		return l.Target
	case l.Path != "":
		return l.Path
	}
	return l.Raw
}
