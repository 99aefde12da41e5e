// Package vault opens a cairn vault: a folder holding plain files (the
// working tree of main, unless the vault is bare) and a .cairn directory
// with the database. It wires the store, the index and the working trees
// together, so that every change to main goes through the same hooks.
package vault

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/durable"
	"cairn/index"
	"cairn/postgres"
	"cairn/sqlite"
	"cairn/store"
	"cairn/worktree"
)

// Names inside a vault.
const (
	DirName = ".cairn"   // the vault's own directory, at the root
	DBName  = "cairn.db" // the database, in DirName
)

// Options configure opening a vault. The zero value gives the defaults.
type Options struct {
	// Logger receives logs. Default: discard.
	Logger *slog.Logger
	// BusyTimeout is how long a write waits for another process. Default 5s.
	BusyTimeout time.Duration
	// Crash, when set, is called at named points (crash tests).
	Crash func(string)
	// Unmapped keeps the database's readers from mapping its file (see
	// sqlite.Options.Unmapped). A process that stays up serving reads
	// while commits land (cairn serve) sets it.
	Unmapped bool
	// Bulk is set by a process that writes the whole vault once (adopting
	// a folder, an import): its database is not mapped either (the pages
	// it mapped would stay in its memory for nothing, some 130 MB at 100k
	// pages) and keeps small page caches (sqlite.Options.Bulk) and a small
	// cache of tree nodes (bulkNodeCache).
	Bulk bool
	// Database, when set, is the URL of the PostgreSQL database that
	// holds the vault (postgres://…); the folder opened is then a place
	// the vault is served from (see DatabaseFile). Empty: the vault is
	// in its folder's SQLite file, or in the database its folder names.
	Database string
}

// Vault is an open vault.
type Vault struct {
	// Root is the folder that holds DirName.
	Root string
	// Bare is set for a vault without a working tree.
	Bare bool
	// DB is the vault's SQLite database; nil for a vault in PostgreSQL,
	// whose database is PG.
	DB *sqlite.DB
	PG *postgres.DB
	// Attached is set by Init when the PostgreSQL database held the vault
	// already: the folder became another place it is served from.
	Attached bool
	Store    *store.Store
	Index    *index.Index
	Trees    *worktree.Manager
	// Admit is the admission pipeline: every change to main goes through it.
	Admit *admit.Pipeline
	// Repaired says what opening the vault put right: a vault folder that
	// moved or was copied, folders brought up to their branches after an
	// interrupted command.
	Repaired []string
	// Problems says what opening the vault found wrong and could not put
	// right (a working tree that cannot be brought up to its branch),
	// each with what to do.
	Problems []string
	st       Storage
	log      *slog.Logger
}

// Init makes dir (created if missing) a vault. A folder that already holds
// files is adopted by the caller's first commit; Init itself writes only
// .cairn/ (and, in a git repository, a .gitignore line for it).
func Init(ctx context.Context, dir string, bare bool, opts *Options) (*Vault, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.Database != "" {
		return initPostgres(ctx, abs, opts.Database, bare, opts)
	}
	if root, err := find(abs); err == nil {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is already inside the vault at %s", dir, root).WithHint("Try: cairn status")
	}
	undo := UndoInit(abs)
	// The database holds the whole history, the tokens' hashes and the
	// audit: only its owner reads it.
	if err := os.MkdirAll(filepath.Join(abs, DirName), 0o700); err != nil {
		undo()
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	v, err := open(ctx, abs, opts)
	if err != nil {
		undo()
		return nil, err
	}
	for _, f := range []string{DBName, DBName + "-wal", DBName + "-shm"} {
		if err := os.Chmod(filepath.Join(abs, DirName, f), 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			v.Close()
			undo()
			return nil, fmt.Errorf("init %s: %w", dir, err)
		}
	}
	v.Bare = bare
	if !bare {
		_, err = v.Trees.Register(ctx, abs, index.Branch, cairn.Hash{})
	}
	if err == nil {
		id := newID()
		err = v.Store.Update(ctx, func(tx *store.Tx) error {
			if bare {
				if err := v.setMeta(ctx, tx, metaBare, "1"); err != nil {
					return err
				}
			}
			if err := v.setMeta(ctx, tx, metaID, id); err != nil {
				return err
			}
			return v.setMeta(ctx, tx, metaRoot, abs)
		})
		v.Trees.VaultID = id
	}
	if err == nil && !bare {
		err = ignoreInGit(abs)
	}
	if err != nil {
		v.Close()
		undo()
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	return v, nil
}

// UndoInit returns what removes what an Init of dir is about to make, for
// when it or what follows it fails: .cairn/ when it is not there now, and
// dir and the folders above it that are not there either (each when it
// then holds nothing else). Call it before Init.
func UndoInit(dir string) func() {
	madeMeta := !exists(filepath.Join(dir, DirName))
	var made []string // deepest first
	if abs, err := filepath.Abs(dir); err == nil {
		for d := abs; !exists(d); d = filepath.Dir(d) {
			made = append(made, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return func() {
		if madeMeta {
			os.RemoveAll(filepath.Join(dir, DirName))
		}
		for _, d := range made {
			if os.Remove(d) != nil {
				return // not empty: what is above it stays too
			}
		}
	}
}

// exists reports whether something is at path (a link counts, as what it
// is, not what it names).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// ignoreInGit adds ".cairn/" to the .gitignore of a folder that is a git
// repository, so a person's own git use keeps working. cairn never runs git
// in a vault.
func ignoreInGit(root string) error {
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		return nil
	}
	path := filepath.Join(root, ".gitignore")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); l == ".cairn/" || l == ".cairn" || l == "/.cairn/" || l == "/.cairn" {
			return nil
		}
	}
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	data = append(data, []byte("# cairn's database\n.cairn/\n")...)
	return os.WriteFile(path, data, 0o644)
}

// Location is where a vault and a working tree are, as Locate finds them
// from a folder without opening the database.
type Location struct {
	// Vault is the folder that holds the vault's DirName directory.
	Vault string
	// Tree is the folder of the working tree the folder is in: the
	// vault's own folder, or a secondary working tree's (whose DirName is
	// a pointer file). For a bare vault it is the vault's folder, which
	// is no working tree.
	Tree string
}

// SameFolder reports whether two paths name one folder: the same path,
// or the same once symbolic links are followed.
func SameFolder(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Locate finds the vault that dir is in (dir itself, a folder below it,
// or a secondary working tree), as Open would, without opening its
// database: for a client that asks a server to open it. A folder in no
// vault is ENOTFOUND, with a hint; a broken pointer file is EINVALID.
func Locate(dir string) (*Location, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := find(abs)
	if err != nil {
		return nil, err
	}
	loc := &Location{Vault: root, Tree: root}
	if fi, err := os.Lstat(filepath.Join(root, DirName)); err == nil && !fi.IsDir() {
		ptr, err := worktree.ReadPointer(root)
		if err != nil {
			return nil, err
		}
		loc.Vault = ptr.Vault
	}
	return loc, nil
}

// Open opens the vault that dir is in (dir itself, a folder below it, or a
// secondary working tree). It also returns the working tree dir is in, or
// nil (a bare vault, or a folder outside every working tree).
func Open(ctx context.Context, dir string, opts *Options) (*Vault, *worktree.Tree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	root, err := find(abs)
	if opts != nil && opts.Database != "" {
		return openDatabase(ctx, root, err, opts)
	}
	if err != nil {
		return nil, nil, err
	}
	if url, err := databaseOf(root); err != nil || url != "" {
		if err != nil {
			return nil, nil, err
		}
		v, err := openPostgres(ctx, root, url, opts)
		if err != nil {
			return nil, nil, err
		}
		if err := v.identifyPostgres(ctx); err != nil {
			v.Close()
			return nil, nil, err
		}
		return v, nil, nil
	}
	treeRoot := root
	// A secondary working tree has a pointer file naming the vault.
	var ptr *worktree.Pointer
	if fi, err := os.Lstat(filepath.Join(root, DirName)); err == nil && !fi.IsDir() {
		if ptr, err = worktree.ReadPointer(root); err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(filepath.Join(ptr.Vault, DirName, DBName)); err != nil {
			return nil, nil, cairn.Errorf(cairn.ENOTFOUND, "%s is a working tree of the vault at %s, which is not there any more", root, ptr.Vault).
				WithHint("If the vault moved, run any cairn command in its new folder once: it updates the pointers of its working trees.")
		}
		treeRoot, root = root, ptr.Vault
	}
	v, err := open(ctx, root, opts)
	if err != nil {
		return nil, nil, err
	}
	bare, err := v.meta(ctx, metaBare)
	if err != nil {
		v.Close()
		return nil, nil, err
	}
	v.Bare = bare == "1"
	opened := v.Root
	if err := v.relocate(ctx); err != nil {
		v.Close()
		return nil, nil, err
	}
	if treeRoot == opened {
		treeRoot = v.Root // the vault's own folder, under the name it is known by
	}
	if err := v.catchUp(ctx); err != nil {
		v.Close()
		return nil, nil, err
	}
	t, moved, err := v.TreeAt(ctx, treeRoot)
	switch {
	case err == nil:
		if moved != "" {
			v.Repaired = append(v.Repaired, moved)
		}
	case cairn.ErrorCode(err) == cairn.ENOTFOUND && ptr == nil:
		t = nil // a folder of the vault that is no working tree (a bare vault's)
	default:
		v.Close()
		return nil, nil, err
	}
	return v, t, nil
}

// TreeAt returns the working tree whose folder is dir: the one the vault
// records there, or a secondary working tree that was moved there (its
// pointer file names it and this vault: the vault records the move, and
// says so in moved), or a tree reached through a symbolic link. A folder
// that is no working tree of this vault is ENOTFOUND; a copy of a tree
// still in its place EINVALID, with a hint.
func (v *Vault) TreeAt(ctx context.Context, dir string) (t *worktree.Tree, moved string, err error) {
	if !filepath.IsAbs(dir) {
		return nil, "", cairn.Errorf(cairn.EINVALID, "%q is not an absolute path: a working tree is named by its folder's", dir).
			WithHint("Give the folder as cairn worktree list names it.")
	}
	dir = filepath.Clean(dir)
	t, err = v.Trees.Get(ctx, dir)
	if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return t, "", err
	}
	ptr, perr := worktree.ReadPointer(dir)
	if perr != nil {
		return nil, "", err // not a secondary working tree
	}
	if !sameFolder(ptr.Vault, v.Root) || v.Trees.VaultID != "" && ptr.ID != v.Trees.VaultID {
		return nil, "", cairn.Errorf(cairn.ENOTFOUND, "%s is not a working tree of this vault at %s (its pointer file names another, or none)", dir, v.Root).
			WithHint("Run the command in the folder of its vault; a tree whose pointer file is older than the vault's identity is made anew with cairn worktree add.")
	}
	if own, err := v.Trees.Get(ctx, v.Root); err == nil && own.ID == ptr.Tree {
		return nil, "", cairn.Errorf(cairn.EINVALID, "%s names the vault's own folder as its working tree; that folder never moves by a pointer file", dir).
			WithHint("Remove the .cairn file of " + dir + ": it is not the vault's.")
	}
	if t, err = v.Trees.Relink(ctx, dir, ptr); err != nil {
		return nil, "", err
	}
	if t.Path == dir {
		moved = fmt.Sprintf("recorded that the working tree of %s moved to %s", t.Branch, t.Path)
	}
	return t, moved, nil
}

// sameFolder reports whether two paths name one folder.
func sameFolder(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

func open(ctx context.Context, root string, opts *Options) (*Vault, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	db, err := sqlite.Open(ctx, filepath.Join(root, DirName, DBName), &sqlite.Options{
		BusyTimeout: opts.BusyTimeout, Logger: log, Crash: opts.Crash, Unmapped: opts.Unmapped, Bulk: opts.Bulk,
	})
	if err != nil {
		return nil, err
	}
	if err := durable.Migrate(ctx, db.Read(), db.Write()); err != nil {
		db.Close()
		return nil, err
	}
	v, err := wire(ctx, root, db, storages{vault: db, index: sqlite.NewIndexStorage(db), trees: sqlite.NewWorktreeStorage(db), admit: sqlite.NewAdmitStorage(db)}, log, opts)
	if err != nil {
		return nil, err
	}
	v.DB = db
	return v, nil
}

// storages are the subsystems' storages on a vault's database.
type storages struct {
	vault Storage
	index index.Storage
	trees worktree.Storage
	admit admit.Storage
}

// bulkNodeCache is the number of decoded tree nodes a bulk process keeps:
// it walks its trees in order (each file looked up in the base, then the
// new tree read through by the index build and the sync), so a node is
// wanted again soon or not at all; the default (4096, some 40 MB) filled
// at about 300k files, so its memory grew with the vault up to there.
const bulkNodeCache = 512

// wire builds the store, the index, the working trees and admission on
// the vault's database db, whichever its backend, with their hooks; it
// closes db when it fails.
func wire(ctx context.Context, root string, db cairn.Backend, st storages, log *slog.Logger, opts *Options) (*Vault, error) {
	so := &store.Options{Logger: log, Crash: opts.Crash}
	if opts.Bulk {
		so.NodeCache = bulkNodeCache
	}
	s, err := store.New(ctx, db, so)
	if err != nil {
		db.Close()
		return nil, err
	}
	ix := index.New(s, st.index, &index.Options{Logger: log})
	s.AddHook(ix.Hook())
	if err := catchUp(ctx, s, ix, log); err != nil {
		db.Close()
		return nil, err
	}
	trees := worktree.NewManager(s, st.trees, filepath.Join(root, DirName))
	trees.Crash = opts.Crash
	s.AddHook(trees.Hook())
	adm := admit.New(s, ix, st.admit, &admit.Options{Logger: log, Crash: opts.Crash})
	return &Vault{Root: root, Store: s, Index: ix, Trees: trees, Admit: adm, st: st.vault, log: log}, nil
}

// catchUp rebuilds main's index when main has a head but the index
// reflects no commit: a migration that changed the index's tables emptied
// it (each such migration says so). It says so first: the command that
// meets it waits as long as cairn reindex takes.
func catchUp(ctx context.Context, s *store.Store, ix *index.Index, log *slog.Logger) error {
	st, err := ix.State(ctx)
	if err != nil || !st.Commit.IsZero() {
		return err
	}
	if _, err := s.Head(ctx, index.Branch); err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil // no main yet: nothing to index
		}
		return err
	}
	log.Warn("this cairn keeps the index in new tables: rebuilding main's index, once (as long as cairn reindex; about 30 s for 100k pages)")
	if err := ix.Rebuild(ctx); err != nil {
		return fmt.Errorf("rebuild the index after an upgrade: %w", err)
	}
	return nil
}

// find walks up from dir to the folder holding DirName (a directory for a
// vault, a pointer file for a secondary working tree).
func find(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, DirName)); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", cairn.Errorf(cairn.ENOTFOUND, "%s is not in a cairn vault", dir).
				WithHint("Try: cairn init, or cairn --vault DIR")
		}
		d = parent
	}
}

// catchUp finishes, for every working tree, the sync a command that died
// owed it: a folder whose branch moved past it (the process that moved the
// branch was killed before it wrote the files) or whose sync was cut
// short. It never waits for another process (see worktree.CatchUp); what
// it did is in Repaired, and a tree it cannot bring up is in Problems
// (every other command still works, worktree remove among them).
func (v *Vault) catchUp(ctx context.Context) error {
	trees, err := v.Trees.List(ctx)
	if err != nil {
		return err
	}
	for _, t := range trees {
		behind, err := v.Trees.Behind(ctx, t)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		if !behind {
			continue
		}
		rep, err := v.Trees.CatchUp(ctx, t)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			hint := cmp.Or(cairn.ErrorHint(err), "Fix what is in the way in that folder; or cairn worktree remove "+t.Path+" --force, then add it again.")
			msg := fmt.Sprintf("%s is behind its branch %s and could not be brought up to it: %v. Hint: %s", t.Path, t.Branch, err, hint)
			v.Problems = append(v.Problems, msg)
			continue
		}
		if rep != nil {
			v.Repaired = append(v.Repaired, fmt.Sprintf("brought %s up to branch %s, which an interrupted command had moved (%d files written, %d with local edits left alone)",
				t.Path, t.Branch, len(rep.Updated), len(rep.LeftAlone)))
		}
	}
	return nil
}

// Main returns the working tree of main, or nil for a bare vault.
func (v *Vault) Main(ctx context.Context) (*worktree.Tree, error) {
	if v.Bare {
		return nil, nil
	}
	return v.Trees.Get(ctx, v.Root)
}

// SyncMain brings the main working tree to main's head after main moved:
// files without local edits are updated, the others left alone and listed.
// It does nothing for a bare vault.
func (v *Vault) SyncMain(ctx context.Context) (*worktree.SyncReport, error) {
	return v.SyncMainPrewritten(ctx, nil)
}

// PrewriteMain starts a writer of files about to be committed to main to a
// staging folder beside the main working tree (worktree.Manager.Prewrite),
// while the change is judged, reading the files queued by their blob from
// from; nil for a bare vault (its Add does nothing). Hand it the files with
// Add, pass it to SyncMainPrewritten, then Discard it.
func (v *Vault) PrewriteMain(ctx context.Context, from *store.Batch) (*worktree.Prewritten, error) {
	t, err := v.Main(ctx)
	if err != nil || t == nil {
		return nil, err
	}
	return v.Trees.Prewrite(ctx, t, from)
}

// SyncMainPrewritten is SyncMain placing the files pre wrote ahead.
func (v *Vault) SyncMainPrewritten(ctx context.Context, pre *worktree.Prewritten) (*worktree.SyncReport, error) {
	t, err := v.Main(ctx)
	if err != nil || t == nil {
		return &worktree.SyncReport{}, err
	}
	return v.Trees.SyncHeadPrewritten(ctx, t, pre)
}

// Close closes the database.
func (v *Vault) Close() error {
	if v.PG != nil {
		return v.PG.Close()
	}
	return v.DB.Close()
}
