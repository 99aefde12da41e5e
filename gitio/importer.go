package gitio

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"cairn"
	"cairn/store"
)

// Limits that keep an import's memory bounded: a commit's new files are
// read and added to the tree in chunks, and the batch is flushed between
// chunks of a large commit.
const (
	chunkFiles = 2048     // files per chunk
	chunkBytes = 64 << 20 // content bytes per chunk
	fetchGroup = 64       // blobs asked of cat-file at once
)

// Git tree entry modes.
const (
	modeTypeMask = 0o170000
	modeRegular  = 0o100000
	modeSymlink  = 0o120000
	modeGitlink  = 0o160000
)

// importer replays git commits onto a cairn branch.
type importer struct {
	s   *store.Store
	o   *ImportOptions
	cat *catFile
	res ImportResult

	head cairn.Hash // the branch head; zero before the first commit
	tree cairn.Hash // its tree

	// vault maps the key (cairn.FoldPath) of every file in the tree to the
	// git path it came from: two git paths may clean to one key.
	vault map[string]string
	// blobs maps git blob ids to content the store already holds.
	blobs map[string]blob
	// blocked holds the files of git's current tree that collided with a
	// file or folder of the vault; each is tried again when a file it may
	// have collided with leaves the vault.
	blocked map[string]*put
	// reported dedupes ImportResult.Skipped.
	reported   map[skipKey]bool
	principals map[[2]string]cairn.Principal
}

type blob struct {
	hash cairn.Hash
	size int64
}

type skipKey struct {
	path string
	kind SkipKind
}

// put is a file of a git commit that goes into the vault.
type put struct {
	gitPath string // git's path
	path    string // the clean vault path
	key     string // its fold
	id      string // git blob id
	mode    cairn.Mode
	inVault bool  // the vault holds the path's previous version
	blob    blob  // the content, once known
	err     error // why it cannot go in
}

func newImporter(s *store.Store, o *ImportOptions, cat *catFile) *importer {
	return &importer{
		s: s, o: o, cat: cat, tree: store.EmptyTree,
		vault:      make(map[string]string),
		blobs:      make(map[string]blob),
		blocked:    make(map[string]*put),
		reported:   make(map[skipKey]bool),
		principals: make(map[[2]string]cairn.Principal),
	}
}

// commit replays one git commit, given its changes against its first
// parent.
func (im *importer) commit(ctx context.Context, info commitInfo, raw []rawChange) error {
	b := im.s.NewBatch()
	var dels []store.FileChange
	var puts []*put
	for _, r := range raw {
		if im.o.Skip != nil && im.o.Skip(r.path) {
			continue
		}
		delete(im.blocked, r.path)
		// The previous version is in the vault unless it was added here
		// or left out.
		key := vaultKey(r.path)
		inVault := key != "" && im.vault[key] == r.path
		if r.newMode == 0 {
			if inVault {
				dels = im.remove(dels, key, r.path)
			}
			continue
		}
		p, kind, reason := classify(r)
		if kind != "" {
			if inVault {
				dels = im.remove(dels, key, r.path)
			}
			im.skip(info.id, r.path, kind, reason)
			continue
		}
		p.inVault = inVault
		puts = append(puts, p)
	}
	tree, err := im.del(ctx, b, im.tree, dels)
	if err != nil {
		return err
	}
	if len(dels) > 0 {
		// Files that collided with one that just left may fit now; they
		// were in git before this commit's own files, so they go first.
		puts = append(im.unblocked(dels), puts...)
	}
	tree, added, err := im.putAll(ctx, b, tree, info.id, puts)
	if err != nil {
		return err
	}
	p, err := im.principal(info.name, info.email)
	if err != nil {
		return err
	}
	c, err := im.s.Commit(ctx, b, store.CommitRequest{
		Branch:     im.o.Branch,
		Expected:   im.head,
		Tree:       tree,
		Principal:  p,
		Message:    commitMessage(info),
		Meta:       commitMeta(info),
		Time:       info.time,
		AllowEmpty: true,
	})
	if err != nil {
		return err
	}
	im.head, im.tree = c.Hash, tree
	for _, p := range added {
		im.blobs[p.id] = p.blob
	}
	return nil
}

// vaultKey returns the key a git path has in the vault, or "" when it
// cannot be in the vault.
func vaultKey(path string) string {
	p, err := cairn.CleanPath(path)
	if err != nil {
		return ""
	}
	return cairn.FoldPath(p)
}

// remove adds the deletion of a file in the vault to dels.
func (im *importer) remove(dels []store.FileChange, key, gitPath string) []store.FileChange {
	delete(im.vault, key)
	return append(dels, store.FileChange{Path: gitPath, Delete: true})
}

// classify turns a git entry into a put, or says why the vault cannot hold
// it.
func classify(r rawChange) (*put, SkipKind, string) {
	var mode cairn.Mode
	switch r.newMode & modeTypeMask {
	case modeRegular:
		if r.newMode&0o111 != 0 {
			mode = cairn.ModeExecutable
		}
	case modeSymlink:
		return nil, SkipSymlink, "symbolic links are not stored in a vault"
	case modeGitlink:
		return nil, SkipSubmodule, "submodules (gitlinks) are not stored in a vault"
	default:
		return nil, SkipSpecial, fmt.Sprintf("tree entry mode %o is not a file", r.newMode)
	}
	if !utf8.ValidString(r.path) {
		return nil, SkipInvalidPath, fmt.Sprintf("path %q is not valid UTF-8", r.path)
	}
	path, err := cairn.CleanPath(r.path)
	if err != nil {
		return nil, SkipInvalidPath, err.Error()
	}
	return &put{gitPath: r.path, path: path, key: cairn.FoldPath(path), id: r.newID, mode: mode}, "", ""
}

// skip records a file left out, once per path and kind.
func (im *importer) skip(commit, path string, kind SkipKind, reason string) {
	k := skipKey{path, kind}
	if im.reported[k] {
		return
	}
	im.reported[k] = true
	im.res.Skipped = append(im.res.Skipped, Skipped{Commit: commit, Path: path, Kind: kind, Reason: reason})
}

// unblocked returns the blocked files that may have collided with one of
// the deleted files: the same key, or a folder of one of them that is the
// other or a folder of the other.
func (im *importer) unblocked(dels []store.FileChange) []*put {
	if len(im.blocked) == 0 {
		return nil
	}
	freed := make(map[string]bool)
	for _, d := range dels {
		for k := vaultKey(d.Path); k != ""; k = parent(k) {
			freed[k] = true
		}
	}
	var out []*put
	for path, p := range im.blocked {
		for k := p.key; k != ""; k = parent(k) {
			if freed[k] {
				out = append(out, p)
				delete(im.blocked, path)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b *put) int { return strings.Compare(a.gitPath, b.gitPath) })
	return out
}

// parent returns the folder of a path, or "" at the top.
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// putAll adds puts to tree in chunks, reading their content from git, and
// returns the new tree and the files it holds now. Files it cannot add are
// recorded as skipped.
func (im *importer) putAll(ctx context.Context, b *store.Batch, tree cairn.Hash, commit string, puts []*put) (cairn.Hash, []*put, error) {
	var added, chunk []*put
	var bytes int64
	apply := func(last bool) error {
		var err error
		var ok []*put
		if tree, ok, err = im.apply(ctx, b, tree, commit, chunk); err != nil {
			return err
		}
		added = append(added, ok...)
		chunk, bytes = chunk[:0], 0
		if !last {
			// The commit writes what its tree reaches; a large commit
			// writes as it goes so that memory stays bounded.
			return b.Flush(ctx)
		}
		return nil
	}
	for i := 0; i < len(puts); i += fetchGroup {
		group := puts[i:min(i+fetchGroup, len(puts))]
		n, err := im.fetch(b, group)
		if err != nil {
			return cairn.Hash{}, nil, err
		}
		chunk = append(chunk, group...)
		if bytes += n; len(chunk) >= chunkFiles || bytes >= chunkBytes {
			if err := apply(i+fetchGroup >= len(puts)); err != nil {
				return cairn.Hash{}, nil, err
			}
		}
	}
	if len(chunk) > 0 {
		if err := apply(true); err != nil {
			return cairn.Hash{}, nil, err
		}
	}
	return tree, added, nil
}

// fetch finds the content of puts: in the store when an earlier commit
// brought the same blob, else from git into the batch. It returns the bytes
// read. A blob over the size limit gets an error instead.
func (im *importer) fetch(b *store.Batch, puts []*put) (int64, error) {
	var ids []string
	want := make(map[string][]*put)
	for _, p := range puts {
		p.err = nil
		if bl, ok := im.blobs[p.id]; ok {
			p.blob = bl
			continue
		}
		if _, ok := want[p.id]; !ok {
			ids = append(ids, p.id)
		}
		want[p.id] = append(want[p.id], p)
	}
	var n int64
	err := im.cat.read(ids, im.o.MaxFileSize, func(i int, data []byte, size int64) error {
		bl := blob{size: size}
		var err error
		if size > im.o.MaxFileSize {
			err = fmt.Errorf("%d bytes; files over %d bytes are left out", size, im.o.MaxFileSize)
		} else {
			bl.hash = b.PutBlob(data)
			n += size
		}
		for _, p := range want[ids[i]] {
			p.blob, p.err = bl, err
		}
		return nil
	})
	return n, err
}

// apply adds puts to tree and returns the new tree and the puts it holds.
// Files over the size limit and files that collide with others are left
// out and recorded; their previous versions leave the vault.
func (im *importer) apply(ctx context.Context, b *store.Batch, tree cairn.Hash, commit string, puts []*put) (cairn.Hash, []*put, error) {
	var dels []store.FileChange
	var try []*put
	for _, p := range puts {
		if p.err != nil {
			im.skip(commit, p.gitPath, SkipTooLarge, p.err.Error())
			if p.inVault {
				dels = im.remove(dels, p.key, p.gitPath)
			}
		}
	}
	// The files too large to keep leave first: the others may take their
	// place.
	tree, err := im.del(ctx, b, tree, dels)
	if err != nil {
		return cairn.Hash{}, nil, err
	}
	for _, p := range puts {
		if p.err != nil {
			continue
		}
		if owner, ok := im.vault[p.key]; ok && owner != p.gitPath {
			p.err = fmt.Errorf("%s differs only in case or Unicode normalization from %s, which is in the vault", p.gitPath, owner)
			im.block(commit, p)
			continue
		}
		im.vault[p.key] = p.gitPath
		try = append(try, p)
	}
	tree, refused, err := im.edit(ctx, b, tree, try)
	if err != nil {
		return cairn.Hash{}, nil, err
	}
	dels = dels[:0]
	for _, p := range refused {
		if p.inVault {
			dels = im.remove(dels, p.key, p.gitPath)
		} else {
			delete(im.vault, p.key)
		}
		im.block(commit, p)
	}
	if tree, err = im.del(ctx, b, tree, dels); err != nil {
		return cairn.Hash{}, nil, err
	}
	return tree, slices.DeleteFunc(try, func(p *put) bool { return p.err != nil }), nil
}

// del applies deletions to tree.
func (im *importer) del(ctx context.Context, b *store.Batch, tree cairn.Hash, dels []store.FileChange) (cairn.Hash, error) {
	if len(dels) == 0 {
		return tree, nil
	}
	t, err := b.Edit(ctx, tree, dels)
	if err != nil {
		return cairn.Hash{}, fmt.Errorf("delete files: %w", err)
	}
	return t, nil
}

// block records a file that collides with another one, to be tried again
// when that one leaves.
func (im *importer) block(commit string, p *put) {
	im.skip(commit, p.gitPath, SkipCollision, p.err.Error())
	im.blocked[p.gitPath] = p
	p.inVault = false
}

// edit adds puts to tree. Edit refuses a whole change for one path that
// clashes with the folders of the tree (a file where a folder is, or a
// folder spelled in another case), so when it does, edit halves the change
// until what is refused is single files; of two clashing files, the one
// first in the vault or first in git's path order stays. Refused puts come
// back with their error set.
func (im *importer) edit(ctx context.Context, b *store.Batch, tree cairn.Hash, puts []*put) (cairn.Hash, []*put, error) {
	if len(puts) == 0 {
		return tree, nil, nil
	}
	changes := make([]store.FileChange, len(puts))
	for i, p := range puts {
		changes[i] = store.FileChange{Path: p.path, Blob: p.blob.hash, Size: p.blob.size, Mode: p.mode}
	}
	t, err := b.Edit(ctx, tree, changes)
	if err == nil {
		return t, nil, nil
	}
	if cairn.ErrorCode(err) != cairn.EINVALID {
		return cairn.Hash{}, nil, err
	}
	if len(puts) == 1 {
		puts[0].err = err
		return tree, puts, nil
	}
	mid := len(puts) / 2
	tree, r1, err := im.edit(ctx, b, tree, puts[:mid])
	if err != nil {
		return cairn.Hash{}, nil, err
	}
	tree, r2, err := im.edit(ctx, b, tree, puts[mid:])
	if err != nil {
		return cairn.Hash{}, nil, err
	}
	return tree, append(r1, r2...), nil
}

// principal maps a git author, once per author.
func (im *importer) principal(name, email string) (cairn.Principal, error) {
	k := [2]string{name, email}
	if p, ok := im.principals[k]; ok {
		return p, nil
	}
	p := im.o.Principal(name, email)
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("principal for author %s <%s>: %w", name, email, err)
	}
	im.principals[k] = p
	return p, nil
}

// Metadata keys of an imported commit: what git knows of it that a cairn
// commit has no field for, so that an export can give it back.
const (
	MetaCommit    = "git.commit"    // the git commit's hash
	MetaAuthor    = "git.author"    // "Name <email> <seconds> <±hhmm>", as git writes it
	MetaCommitter = "git.committer" // likewise
)

// commitMeta is the metadata of the cairn commit of a git commit. An
// identity that is not valid UTF-8 is kept with U+FFFD in place of the bad
// bytes.
func commitMeta(info commitInfo) map[string]string {
	return map[string]string{
		MetaCommit:    info.id,
		MetaAuthor:    strings.ToValidUTF8(info.author, "\uFFFD"),
		MetaCommitter: strings.ToValidUTF8(info.commit, "\uFFFD"),
	}
}

// noMessage is the message of the cairn commit of a git commit that has
// none (a cairn commit must have one); an export gives it no message again.
func noMessage(id string) string { return "(git commit " + id + " has no message)" }

// commitMessage is the git message as a cairn commit message: valid UTF-8,
// without trailing blank lines, never empty, at most 64 KB.
func commitMessage(info commitInfo) string {
	const max = 64 << 10
	msg := strings.TrimRight(strings.ToValidUTF8(info.message, "\uFFFD"), " \t\r\n")
	if strings.TrimSpace(msg) == "" {
		return noMessage(info.id)
	}
	if len(msg) > max {
		cut := max - len("…")
		for !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
