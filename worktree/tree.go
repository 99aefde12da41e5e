package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"cairn"
	"cairn/store"
)

// PointerFile is the file at the top of a secondary working tree that names
// the vault it belongs to, as git's ".git" file does for worktrees.
const PointerFile = ".cairn"

// Manager keeps a vault's working trees.
type Manager struct {
	s       *store.Store
	st      Storage
	lockDir string // where the per-tree lock files live (.cairn/)
	// MaxFileSize is the largest file read from a folder; default
	// DefaultMaxFileSize.
	MaxFileSize int64
	// Now returns the time; default time.Now.
	Now func() time.Time
	// Crash, when set, is called at named points of a sync; crash tests
	// kill the process there.
	Crash func(string)
	// VaultID is the vault's identity, written in the pointer files of
	// new working trees.
	VaultID string
	// watched counts the whole-tree statuses made from a watch journal,
	// without a walk.
	watched atomic.Int64
	// reusedLists counts the folders a status did not list again (see
	// folderList); racyLists, when set, replaces a file's racyWindow for
	// them.
	reusedLists atomic.Int64
	racyLists   time.Duration
	// rowsPart, when set, replaces statsPart.
	rowsPart int
	// journaled wakes the statuses of this process that wait for their
	// cookie when a watcher of this process journals one.
	journaled wakeup
}

// NewManager returns the manager of the working trees of the vault whose
// store is s, whose working trees' records st keeps, and whose database
// directory is lockDir.
func NewManager(s *store.Store, st Storage, lockDir string) *Manager {
	return &Manager{s: s, st: st, lockDir: lockDir, Now: time.Now}
}

func (m *Manager) maxSize() int64 {
	if m.MaxFileSize > 0 {
		return m.MaxFileSize
	}
	return DefaultMaxFileSize
}

func (m *Manager) point(name string) {
	if m.Crash != nil {
		m.Crash(name)
	}
}

// Tree is a working tree: a folder that holds a branch.
type Tree struct {
	ID     int64      `json:"-"`
	Path   string     `json:"path"`
	Branch string     `json:"branch"`
	Base   cairn.Hash `json:"base"`
	// Pending is a sync that did not finish (the process died); Recover
	// completes it.
	Pending cairn.Hash `json:"pending,omitzero"`
}

// List returns every working tree, by path.
func (m *Manager) List(ctx context.Context) ([]*Tree, error) {
	trees, err := m.st.Trees(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the working trees: %w", err)
	}
	return trees, nil
}

// Get returns the working tree at an absolute folder path; ENOTFOUND when
// there is none.
func (m *Manager) Get(ctx context.Context, path string) (*Tree, error) {
	t, err := m.st.TreeAt(ctx, path)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s is not a working tree of this vault", path).WithHint("Try: cairn worktree list")
	case err != nil:
		return nil, fmt.Errorf("read the working tree %s: %w", path, err)
	}
	return t, nil
}

// reload reads a tree's record again.
func (m *Manager) reload(ctx context.Context, t *Tree) error {
	n, err := m.st.Tree(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("read the working tree %s: %w", t.Path, err)
	}
	*t = *n
	return nil
}

// Register records a folder as the working tree of branch, based on base
// (zero: the branch has no commit yet). It writes no files.
func (m *Manager) Register(ctx context.Context, path, branch string, base cairn.Hash) (*Tree, error) {
	t := &Tree{Path: path, Branch: branch, Base: base}
	err := m.s.Update(ctx, func(tx *store.Tx) error {
		var err error
		t.ID, err = m.st.AddTree(ctx, tx.Backend(), t, m.Now())
		return err
	})
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ECONFLICT {
			return nil, cairn.Errorf(cairn.EINVALID, "%s is already a working tree", path)
		}
		return nil, fmt.Errorf("register working tree %s: %w", path, err)
	}
	return t, nil
}

// Add makes dir (missing or empty) a working tree of branch and writes the
// branch's files into it, with a pointer file naming the vault at vaultRoot.
func (m *Manager) Add(ctx context.Context, dir, branch, vaultRoot string) (*Tree, *SyncReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	head, err := m.s.Head(ctx, branch)
	if err != nil {
		return nil, nil, err
	}
	trees, err := m.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range trees {
		// A tree inside another would be part of it (its files the other's
		// local edits), and one around another would hold it.
		if within(abs, t.Path) || within(t.Path, abs) {
			return nil, nil, cairn.Errorf(cairn.EINVALID, "%s is inside the working tree %s, or holds it", dir, t.Path).
				WithHint("Choose a folder outside the vault's folder and its working trees, such as ../" + filepath.Base(abs))
		}
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return nil, nil, cairn.Errorf(cairn.EINVALID, "%s is not empty", dir).WithHint("Choose a new folder for the working tree.")
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, nil, err
	}
	t, err := m.Register(ctx, abs, branch, cairn.Hash{})
	if err != nil {
		return nil, nil, err
	}
	if err := WritePointer(abs, Pointer{Vault: vaultRoot, Tree: t.ID, ID: m.VaultID}); err != nil {
		m.s.Update(ctx, func(tx *store.Tx) error { return m.forget(ctx, tx, t.ID) })
		return nil, nil, err
	}
	rep, err := m.Sync(ctx, t, head)
	return t, rep, err
}

// Remove forgets a secondary working tree and deletes its folder. It
// refuses a tree with local edits unless force is set. A tree whose folder
// is gone is only forgotten.
func (m *Manager) Remove(ctx context.Context, t *Tree, force bool) error {
	if fi, err := os.Lstat(filepath.Join(t.Path, PointerFile)); err == nil && fi.IsDir() && sameFile(filepath.Join(t.Path, PointerFile), m.lockDir) {
		return cairn.Errorf(cairn.EINVALID, "%s is the vault's own folder; it cannot be removed", t.Path)
	}
	// A folder that is gone, or that is no longer this vault's (a copy's,
	// another vault's), is only forgotten: its files are not this vault's
	// to delete.
	_, err := os.Lstat(t.Path)
	missing := errors.Is(err, fs.ErrNotExist) || m.owned(t) != nil
	if !force && !missing {
		st, err := m.Status(ctx, t)
		if err != nil {
			return err
		}
		if len(st.Changes) > 0 {
			return cairn.Errorf(cairn.ECONFLICT, "%s has %d local edits", t.Path, len(st.Changes)).
				WithHint("Commit them, or remove with --force to throw them away.")
		}
	}
	if err := m.s.Update(ctx, func(tx *store.Tx) error { return m.forget(ctx, tx, t.ID) }); err != nil {
		return err
	}
	if missing {
		return nil
	}
	return os.RemoveAll(t.Path)
}

// lock takes the tree's lock for the duration of a change.
func (m *Manager) lock(t *Tree) (func(), error) { return lockFile(m.lockPath(t)) }

func (m *Manager) lockPath(t *Tree) string {
	return filepath.Join(m.lockDir, fmt.Sprintf("worktree-%d.lock", t.ID))
}

// Hook returns the store hook that keeps branches and their working trees
// together: a branch that a working tree holds cannot be deleted, whatever
// deletes it (cairn branch --delete, a review decision that removes its
// proposal branch), so no folder is ever left holding a branch that is gone.
func (m *Manager) Hook() store.RefHook {
	return func(ctx context.Context, tx *store.Tx, u cairn.RefUpdate) error {
		branch, ok := strings.CutPrefix(u.Name, "heads/")
		if !ok || !u.New.IsZero() || u.Old.IsZero() {
			return nil
		}
		t, err := m.st.BranchTree(ctx, tx.Backend(), branch)
		switch {
		case cairn.ErrorCode(err) == cairn.ENOTFOUND:
			return nil
		case err != nil:
			return fmt.Errorf("check the working trees of %s: %w", branch, err)
		}
		return cairn.Errorf(cairn.ECONFLICT, "branch %s is checked out in the working tree %s", branch, t.Path).
			WithHint("Commit or drop its edits, then: cairn worktree remove " + t.Path)
	}
}

// within reports whether path is dir or inside it (both clean and
// absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
