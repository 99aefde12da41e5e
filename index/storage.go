package index

import (
	"cmp"
	"context"
	"math"
	"strings"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// Storage keeps the index's rows: one row per file of the indexed tree,
// the keys links resolve by, the links with their resolutions, the lookups
// each link makes, the sources pages cite, the lint findings, the full
// text, and the commit the rows reflect. The SQLite implementation is
// sqlite.IndexStorage; docs/storage.md lists the others.
//
// The index decides every row: it parses, resolves, lints and encodes (the
// JSON of a page's parse, a link's packed form, a lookup's hash), and a
// storage keeps the values as given and answers the lookups below. What
// an implementation chooses for itself is how: tables, secondary indexes,
// statements, batching, and the full-text engine. Full-text search is
// given words the index has already folded (lower case, no diacritics,
// stopwords left out; see [StorageReader.Search]), so an implementation
// may use its own engine (SQLite FTS5, PostgreSQL tsvector with the
// "simple" configuration) as long as what it returns agrees on these,
// which are semantic and must match between implementations:
//
//   - Which pages match: those whose text (title and body words as
//     written by [StorageTx.WriteText]) holds every term, a term with
//     Prefix matching any word that starts with it.
//   - The order: pages whose title holds every term first, then pages
//     with fewer words first ([FileRow.Words]), ties by path. The full
//     text keeps which words a page holds, not how often, so every page
//     that matches holds each term once and BM25 ranks them by length
//     alone: the order is BM25's, and an implementation need not compute
//     a score to find the first pages of it.
//   - Score is BM25 (k1 = 1.2, b = 0.75) with each term counted once:
//     the sum over terms of ln(1 + (N - n + 0.5) / (n + 0.5)) ×
//     2.2 / (1 + 1.2 × (0.25 + 0.75 × words / average words)), where N
//     is the number of pages in the full text and n the number holding
//     the term (for a prefix, at most the sum over the words it starts).
//     It is shown to people and compared only within one result list.
//   - Snippets and their match offsets are not the storage's business:
//     the index cuts them from the page's content in the store, so they
//     agree whatever the engine.
//
// Reads and writes inside the store's write transaction go through a
// [StorageTx], opened on that transaction with [Storage.Begin]: the rows
// commit (or roll back) with the ref update, and an implementation may
// keep per-transaction state (prepared statements) until Close.
//
// Errors: a missing row has code ENOTFOUND where a method says so; a
// write lock that cannot be had has code EUNAVAILABLE; other database
// errors are returned wrapped, with cairn's codes where the backend has
// them.
type Storage interface {
	// Committed returns a reader of the committed index (the read pool; it
	// never waits for the writer).
	Committed() StorageReader
	// Snapshot returns a reader of the committed index that sees one state
	// of it, whatever commits meanwhile, until it is closed (a read
	// transaction; it never waits for the writer, nor holds it up).
	Snapshot(ctx context.Context) (StorageSnapshot, error)
	// Begin returns the index's rows as the store's write transaction tx
	// sees them, to read and write inside it. The caller must Close it
	// before tx ends. A tx the storage does not belong to is EINTERNAL.
	Begin(ctx context.Context, tx cairn.Tx) (StorageTx, error)
}

// StorageReader reads one state of the index: the committed one, or what a
// write transaction holds so far (a [StorageTx] is one too).
type StorageReader interface {
	// State returns the commit and tree the rows reflect; a zero State
	// when the index has never been written.
	State(ctx context.Context) (State, error)

	// FileAt returns the file whose path is path, found by the key
	// (cairn.FoldPath(path), markdown.StepFile) it holds; ENOTFOUND when
	// there is none.
	FileAt(ctx context.Context, path string) (FileRef, error)
	// KeyHolders returns the files holding the key value at any of steps
	// (one or more), sorted by path; none is an empty result, not an
	// error. A file holding it at two steps is listed twice.
	KeyHolders(ctx context.Context, value string, steps ...markdown.Step) ([]FileRef, error)
	// File returns the row of file id; ENOTFOUND when there is none.
	File(ctx context.Context, id int64) (FileRow, error)
	// Path returns the path of file id; ENOTFOUND when there is none.
	Path(ctx context.Context, id int64) (string, error)
	// Depth returns the depth of file id, or -1 when it is unreachable or
	// there is no such file.
	Depth(ctx context.Context, id int64) (int, error)
	// FilesOfKind returns the ids of the files of any of kinds, in id order.
	FilesOfKind(ctx context.Context, kinds ...lint.Kind) ([]int64, error)
	// PagesWhere returns the title rows of the pages (of type typ, when
	// set) whose frontmatter meets every condition, by path, from the
	// field rows (FieldQuery says what each operator means).
	PagesWhere(ctx context.Context, typ string, where []FieldQuery) ([]TitleRow, error)
	// FilesOfType returns the ids of the pages whose type is any of
	// types, in id order.
	FilesOfType(ctx context.Context, types ...string) ([]int64, error)
	// FilesCiting returns the ids of the pages citing the source key value.
	FilesCiting(ctx context.Context, value string) ([]int64, error)
	// Blobs returns the content of every indexed file by path.
	Blobs(ctx context.Context) (map[string]cairn.Hash, error)
	// NextFileID returns an id that no file has had in this index: the
	// index assigns ids itself, so that inserts need not return them.
	// Inside a transaction it follows the inserts made so far.
	NextFileID(ctx context.Context) (int64, error)

	// Link returns the link ord of file src (DstPath not filled);
	// ENOTFOUND when there is none.
	Link(ctx context.Context, src int64, ord int) (LinkRow, error)
	// LinksFrom returns the links of file src in order, each with DstPath.
	LinksFrom(ctx context.Context, src int64) ([]LinkRow, error)
	// LinksTo returns the links from other files that lead to file dst,
	// each with SrcPath and DstPath, by SrcPath and Ord: limit of them
	// from the off-th on (limit 0: all of them from there).
	LinksTo(ctx context.Context, dst int64, off, limit int) ([]LinkRow, error)
	// CountLinksTo returns how many links from other files lead to dst.
	CountLinksTo(ctx context.Context, dst int64) (int, error)
	// AnchoredLinksTo returns the links into file dst whose Flags have
	// LinkAnchored (they name a heading or block of it), self-links
	// included.
	AnchoredLinksTo(ctx context.Context, dst int64) ([]LinkKey, error)
	// LinksLookingUp returns the links whose lookups include hash
	// ([LinkKeyRow]).
	LinksLookingUp(ctx context.Context, hash int64) ([]LinkKey, error)
	// Children returns the distinct files that file id's resolved links
	// lead to, itself left out, in no order.
	Children(ctx context.Context, id int64) ([]int64, error)
	// Parents returns the distinct files with resolved links to file id,
	// itself left out, in no order.
	Parents(ctx context.Context, id int64) ([]int64, error)
	// Edges returns the whole link graph: for each file, the distinct
	// other files its resolved links lead to, in no order.
	Edges(ctx context.Context) (map[int64][]int64, error)

	// Findings returns the findings of file (0: every file) and rule ("":
	// every rule), each with Page set, in no order.
	Findings(ctx context.Context, file int64, rule string) ([]lint.Finding, error)
	// FindingsPart returns limit (0: all) of the findings q selects from
	// the off-th on, each with Page set, in FindingOrder, and the counts of
	// all of them by rule and severity, sorted by rule then severity (as
	// CountFindings). The two are of one state inside a snapshot.
	FindingsPart(ctx context.Context, q FindingQuery, off, limit int) ([]lint.Finding, []FindingCount, error)
	// Stats counts the rows.
	Stats(ctx context.Context) (Stats, error)
	// Titles returns the title row of every page, by path.
	Titles(ctx context.Context) ([]TitleRow, error)
	// Search returns up to q.Limit pages matching every term of q, in the
	// order the Storage doc describes. An expression the engine cannot
	// run is an error; q has at least one term.
	Search(ctx context.Context, q FullTextQuery) ([]SearchHit, error)
	// TextStats returns the totals and the terms' page counts the scores
	// of a search for terms weigh by.
	TextStats(ctx context.Context, terms []FullTextTerm) (TextStats, error)
	// Snapshot returns every row of the index, with file ids replaced by
	// paths, as sorted lines per table: two indexes of one tree in one
	// implementation have equal snapshots ([Index.Check]).
	Snapshot(ctx context.Context) (map[string][]string, error)
}

// A Shadower is a StorageTx that can write a rebuild beside the committed
// rows: Shadow makes, for the rest of the transaction, every table of the
// index an empty one of the same definition that the transaction alone
// sees, and leaves the committed rows as they are. A deep check
// ([Index.Check]) shadows after SaveSnapshot, so that its rebuild writes
// nothing of the vault's and, in a transaction of [store.Store.Inspect],
// holds no write lock.
type Shadower interface {
	Shadow(ctx context.Context) error
}

// TableDrift is how one table of the index differs from the rows a
// transaction kept of it ([StorageTx.SnapshotDrift]).
type TableDrift struct {
	Table string
	// Added are lines there now but not then, Gone lines there then but not
	// now: the first of each, sorted, and how many there are in all.
	Added, Gone       []string
	AddedAll, GoneAll int
}

// StorageSnapshot is one committed state of the index ([Storage.Snapshot]).
type StorageSnapshot interface {
	StorageReader
	// Close ends the snapshot; nothing may be used after it.
	Close() error
}

// StorageTx reads and writes the index inside a store write transaction
// ([Storage.Begin]). Inserts may be held and written in batches by the
// implementation, but every read sees every write made before it.
type StorageTx interface {
	StorageReader

	// SetState records the commit and tree the rows reflect.
	SetState(ctx context.Context, st State) error

	// SaveSnapshot keeps every row Snapshot would give, inside the
	// transaction (temporary tables, which SnapshotDrift and a rollback
	// drop), for SnapshotDrift: a deep check ([Index.Check]) then holds no
	// copy of the index in memory. It returns false, having kept nothing,
	// when the database does not let it (a PostgreSQL role without TEMP):
	// the check compares Snapshots instead.
	SaveSnapshot(ctx context.Context) (bool, error)
	// SnapshotDrift compares the rows now with those SaveSnapshot kept,
	// table by table, as typed values, each distinct row once: the lines
	// (as Snapshot gives them) there now and not then, and then and not
	// now, the first limit of each in order, with how many there are.
	// Tables without a difference are left out.
	SnapshotDrift(ctx context.Context, limit int) ([]TableDrift, error)

	// Clear removes every row, full text included, for a full build; the
	// rows that follow come in key order (see the row types), and
	// FinishBuild must follow them before the transaction commits.
	Clear(ctx context.Context) error
	// FinishBuild completes a full build that Clear started: whatever the
	// implementation defers while loading in bulk (secondary indexes,
	// merging the full text).
	FinishBuild(ctx context.Context) error

	// InsertFiles adds file rows, every field given (ID, Inbound and Depth
	// included).
	InsertFiles(ctx context.Context, rows []FileRow) error
	// UpdateFile replaces the row of file r.ID from Path to Problems and
	// Words, keeping its inbound count and depth.
	UpdateFile(ctx context.Context, r FileRow) error
	// DeleteFile removes the row of file id (not its keys, links or
	// findings, which the caller removes first).
	DeleteFile(ctx context.Context, id int64) error
	// AddInbound adds delta to the inbound count of file id.
	AddInbound(ctx context.Context, id int64, delta int) error
	// SetDepth sets the depth of file id (-1: unreachable).
	SetDepth(ctx context.Context, id int64, depth int) error
	// ClearDepths makes every file unreachable.
	ClearDepths(ctx context.Context) error

	// InsertKeys adds key rows; a row already there is kept.
	InsertKeys(ctx context.Context, rows []KeyRow) error
	// DeleteKeys removes file's rows of keys.
	DeleteKeys(ctx context.Context, file int64, keys []markdown.Key) error
	// InsertFields adds frontmatter field rows.
	InsertFields(ctx context.Context, rows []FieldRow) error
	// DeleteFields removes every field row of file.
	DeleteFields(ctx context.Context, file int64) error
	// InsertCites adds citation rows; a row already there is kept.
	InsertCites(ctx context.Context, rows []CiteRow) error
	// DeleteCites removes file's citations of values.
	DeleteCites(ctx context.Context, file int64, values []string) error

	// InsertLinks adds link rows (SrcPath and DstPath are ignored).
	InsertLinks(ctx context.Context, rows []LinkRow) error
	// InsertLinkKeys adds lookup rows; a row already there is kept.
	InsertLinkKeys(ctx context.Context, rows []LinkKeyRow) error
	// DeleteLink removes link ord of file src and its lookup rows of
	// hashes.
	DeleteLink(ctx context.Context, src int64, ord int, hashes []int64) error
	// SetResolution records how link ord of file src resolves: Status,
	// Dst, Step and Detail of r.
	SetResolution(ctx context.Context, src int64, ord int, r LinkRow) error
	// SetLinkData replaces the packed form of link ord of file src (its
	// label or position changed, not what it looks up).
	SetLinkData(ctx context.Context, src int64, ord int, data []byte) error

	// InsertFindings adds findings.
	InsertFindings(ctx context.Context, rows []FindingRow) error
	// DeleteFindings removes the findings of file.
	DeleteFindings(ctx context.Context, file int64) error

	// WriteText adds page id to the full text: title and text are its
	// folded words separated by spaces (text holds the title's words too).
	WriteText(ctx context.Context, id int64, title, text string) error
	// DeleteText removes page id from the full text. The index calls it
	// before it updates or deletes the page's row, so an implementation
	// may find the text by what the row holds (SQLite files a page's text
	// under a key made of its row's Words and id).
	// text is what WriteText was given as the page's text, read again
	// from its old content: SQLite's full text cannot give back the words
	// of a page, and it counts the pages holding each word from them
	// (content purged since it was indexed reads as empty: the words only
	// it held keep their counts until the next full build).
	DeleteText(ctx context.Context, id int64, text string) error

	// Close releases what the StorageTx holds; it must be called before
	// the transaction ends, and nothing may be used after it.
	Close() error
}

// TextFlusher is a StorageTx that holds its full-text writes to make them
// later, in an order of its own (SQLite files a page's text by its length,
// and its engine takes rows in that order). A full build calls FlushText
// once every page's text is given, so that the writes are made while it
// resolves links, which needs no storage, instead of at FinishBuild.
type TextFlusher interface {
	FlushText(ctx context.Context) error
}

// An OverlappingWriter is a StorageTx whose writes are done by another
// process, a database server: a full build writes one chunk's rows while
// it prepares the next, which holds two chunks' rows instead of one. An
// engine in the build's own process (SQLite) writes on the cores that
// prepare, and gains nothing from it.
type OverlappingWriter interface {
	OverlapWrites() bool
}

// FileRef names a file of the index.
type FileRef struct {
	ID   int64
	Path string
	Kind lint.Kind
	Blob cairn.Hash
}

// FileRow is what the index stores about one file. The page fields are
// empty for files that are not pages; for pages, Title and TitleSource are
// always stored, and an empty PageID, Type or JSON field means none. Rows
// of a full build come in ID order.
type FileRow struct {
	ID   int64
	Path string
	Kind lint.Kind
	Blob cairn.Hash
	Size int64
	// PageID is the page's id when it is not its path without ".md".
	PageID      string
	Title       string
	TitleSource int // 1 frontmatter, 2 heading, 3 file name
	Type        string
	// Frontmatter (without title and type when their fields hold them),
	// Aliases, Sources, Headings ([level, text] pairs), BlockIDs and
	// Problems are JSON.
	Frontmatter, Aliases, Sources, Headings, BlockIDs, Problems string
	// Inbound counts the resolved links from other files.
	Inbound int
	// Depth is the number of links from index.md; -1 when unreachable.
	Depth int
	// Words is the number of words a page's full-text row holds (title
	// and body words as [StorageTx.WriteText] gets them, separated by
	// spaces); 0 for other files. Search ranks by it.
	Words int
}

// pageID returns the page's id: PageID, else its path without ".md".
func (r *FileRow) pageID() string {
	if r.PageID != "" {
		return r.PageID
	}
	return strings.TrimSuffix(r.Path, ".md")
}

// KeyRow says file answers to a key (markdown.ResolutionKeys). Rows of a
// full build come sorted by Value, Step and File.
type KeyRow struct {
	Value string
	Step  markdown.Step
	File  int64
}

// CiteRow says page File cites a source found by key Value. Rows of a full
// build come sorted by Value and File.
type CiteRow struct {
	Value string
	File  int64
}

// FieldRow says page File's frontmatter field Name has the scalar Value
// (one row for each item of a list). Num holds a number's value, for
// comparisons; it is nil for every other value.
type FieldRow struct {
	File  int64
	Name  string
	Value string
	Num   *float64
}

// FindingQuery selects findings in a storage: those of File (0: every
// file) and Rule ("": every rule) whose severity is one of Severities
// (none: every severity).
type FindingQuery struct {
	File       int64
	Rule       string
	Severities []lint.Severity
}

// FindingOrder compares findings as a storage returns a part of them: by
// page, rule, subject, message and severity, each byte by byte. It is
// lint.Sort's order, with ties broken.
func FindingOrder(a, b lint.Finding) int {
	return cmp.Or(strings.Compare(a.Page, b.Page), strings.Compare(a.Rule, b.Rule),
		strings.Compare(a.Subject, b.Subject), strings.Compare(a.Message, b.Message),
		strings.Compare(string(a.Severity), string(b.Severity)))
}

// FindingCount is how many findings of Rule have Severity.
type FindingCount struct {
	Rule     string
	Severity lint.Severity
	N        int
}

// LinkAnchored is the bit of [LinkRow.Flags] of a link that names a heading
// or a block.
const LinkAnchored = flagAnchored

// LinkRow is one link of a page: link Ord of file Src. Rows of a full build
// come sorted by Src and Ord.
type LinkRow struct {
	Src int64
	Ord int
	// Flags are the index's bits: 1 embed, 2 escapes, LinkAnchored.
	Flags int
	// Status is 1 resolved, 2 broken, 3 ambiguous; Dst the file it leads
	// to when resolved (0: none); Step the resolution step; Detail the
	// rest of the resolution as JSON ("": none).
	Status int
	Dst    int64
	Step   int
	Detail string
	// Data is the link as the parse found it, packed by the index.
	Data []byte
	// SrcPath and DstPath are the paths of Src and Dst ("" for none),
	// filled by the reads that say so.
	SrcPath, DstPath string
}

// LinkKey names link Ord of file Src.
type LinkKey struct {
	Src int64
	Ord int
}

// LinkKeyRow says link Ord of file Src looks up a key value whose hash
// (the index's, 64 bits) is Hash. Rows of a full build come sorted by
// Hash, Src and Ord.
type LinkKeyRow struct {
	Hash int64
	Src  int64
	Ord  int
}

// FindingRow is a finding about file File (Finding.Page is not stored:
// reads fill it from the file). Rows of a full build come sorted by File,
// then by the finding's rule, severity, subject and message.
type FindingRow struct {
	File    int64
	Finding lint.Finding
}

// TitleRow is a page's names, Aliases as JSON ("": none).
type TitleRow struct {
	Path, Title, Type, Aliases string
	Inbound                    int
}

// FullTextQuery is a search as the storage runs it: every term must match.
type FullTextQuery struct {
	Terms []FullTextTerm
	// Type, when set, keeps only pages of that type.
	Type string
	// Folder, when set, keeps only files under it: a path ending in "/",
	// compared ignoring ASCII case.
	Folder string
	// Limit is the most pages to return (at least 1).
	Limit int
}

// FolderFirst reports whether a storage's search for limit pages under a
// folder of files files, among pages, reads the folder's files first: all
// of them then, where reading the matches in order until limit+1 are
// under the folder reads about (limit+1) × pages / files. At 100k pages
// and a limit of 10, a folder of fewer than some 1,050 files. (A tenth of
// the pages, as SQLite does for a type, read a folder of 10k pages this
// way: 90 ms against 30 ms in order.)
func FolderFirst(files, limit, pages int64) bool { return files*files < (limit+1)*pages }

// FolderKeys returns the bounds, lo included and hi not, of the folded
// path keys (markdown.StepFile) of the files under folder, a path ending
// in "/". They are a superset of the files a search's folder filter keeps
// (a path that equals the folder ignoring ASCII case folds to its keys),
// which the filter then keeps.
func FolderKeys(folder string) (lo, hi string) {
	lo = cairn.FoldPath(folder)
	return lo, strings.TrimSuffix(lo, "/") + "0" // '/' + 1
}

// FolderFiles is how many of a folder's files a storage counts to decide
// FolderFirst for limit pages among pages: one more than it allows.
func FolderFiles(limit, pages int64) int64 { return int64(math.Sqrt(float64((limit+1)*pages))) + 1 }

// FullTextTerm is one folded word; with Prefix, any word starting with it.
type FullTextTerm struct {
	Word   string
	Prefix bool
}

// SearchHit is one page a full-text search found.
type SearchHit struct {
	Path  string
	ID    string // the page's id
	Title string
	Type  string
	Blob  cairn.Hash
	// Score is the page's relevance, higher is better (see Storage).
	Score float64
	// InTitle says the page's title holds every term.
	InTitle bool
	// Words is the page's [FileRow.Words], which ranks it.
	Words int
}

// TextStats are what a search's scores weigh by ([Storage]'s BM25): the
// pages in the full text, the words they hold in all, and for each term of
// a query how many pages hold it (for a prefix, the sum over the words it
// starts). Broad marks a prefix that starts more words than a storage
// sums: it counts as being in every page.
type TextStats struct {
	Pages, Words int64
	Holding      []int64
	Broad        []bool
}

// Score returns BM25 of a page of words words that holds every term, as
// the Storage doc defines it: what every storage's Search scores by.
func (s TextStats) Score(words int) float64 {
	if s.Pages <= 0 {
		return 0
	}
	idf := 0.0
	for i, n := range s.Holding {
		n := min(n, s.Pages)
		if s.Broad[i] {
			n = s.Pages
		}
		idf += math.Log(1 + (float64(s.Pages)-float64(n)+0.5)/(float64(n)+0.5))
	}
	avg := max(float64(s.Words)/float64(s.Pages), 1)
	norm := 1 - bm25B + bm25B*float64(words)/avg
	return idf * (bm25K1 + 1) / (1 + bm25K1*norm)
}

// BM25's parameters ([Storage]).
const bm25K1, bm25B = 1.2, 0.75
