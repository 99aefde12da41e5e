package worktree

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"cairn"
	"cairn/store"
)

// Pointer is what the pointer file at the top of a secondary working tree
// says: the vault it belongs to and which of the vault's trees it is.
type Pointer struct {
	// Vault is the folder of the vault.
	Vault string
	// Tree is the tree's id in the vault; 0 in pointer files written
	// before it was recorded.
	Tree int64
	// ID is the vault's identity (Manager.VaultID), which a copy of the
	// vault does not share; "" in pointer files written before it was
	// recorded.
	ID string
}

// ReadPointer reads the pointer file of the folder dir: ENOTFOUND when dir
// has none, EINVALID when the file is not a pointer.
func ReadPointer(dir string) (*Pointer, error) {
	file := filepath.Join(dir, PointerFile)
	data, err := readSmall(file, maxPointer)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s has no pointer file", dir)
	}
	if err != nil {
		return nil, err
	}
	p := &Pointer{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ": ")
		switch key {
		case "vault":
			p.Vault = strings.TrimSpace(value)
		case "tree":
			p.Tree, _ = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		case "id":
			p.ID = strings.TrimSpace(value)
		}
	}
	if p.Vault == "" || !filepath.IsAbs(p.Vault) {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is not a cairn pointer file", file).
			WithHint("A working tree's .cairn file names its vault (vault: /path/to/vault); make a new tree with cairn worktree add.")
	}
	return p, nil
}

// maxPointer bounds a pointer file: a few lines.
const maxPointer = 4096

// readSmall reads file when it is a regular file of at most max bytes: it
// does not follow a symbolic link, nor wait on a named pipe, nor read a
// huge file someone left in its place (EINVALID for each).
func readSmall(file string, max int64) ([]byte, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, cairn.Errorf(cairn.EINVALID, "%s is a symbolic link, not a cairn pointer file", file)
		}
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if !info.Mode().IsRegular() || info.Size() > max {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is not a cairn pointer file (%v, %d bytes)", file, info.Mode().Type(), info.Size()).
			WithHint("A working tree's .cairn file is a few lines naming its vault; make a new tree with cairn worktree add.")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return data, nil
}

// WritePointer writes the pointer file of the folder dir.
func WritePointer(dir string, p Pointer) error {
	data := "vault: " + p.Vault + "\n"
	if p.Tree != 0 {
		data += "tree: " + strconv.FormatInt(p.Tree, 10) + "\n"
	}
	if p.ID != "" {
		data += "id: " + p.ID + "\n"
	}
	file := filepath.Join(dir, PointerFile)
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// Relink records that the secondary working tree whose pointer is p now
// lives in the folder dir (it was moved), and returns it. It refuses a
// folder that is a copy of a tree still in its place, and a pointer that
// names no tree.
func (m *Manager) Relink(ctx context.Context, dir string, p *Pointer) (*Tree, error) {
	if p.Tree == 0 {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s is not a working tree of this vault (its pointer file names no tree)", dir).
			WithHint("Make a new one with cairn worktree add DIR BRANCH; cairn worktree list shows the vault's trees.")
	}
	t, err := m.st.Tree(ctx, p.Tree)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s names working tree %d, which this vault does not have", dir, p.Tree).
			WithHint("Make a new one with cairn worktree add DIR BRANCH.")
	case err != nil:
		return nil, fmt.Errorf("read working tree %d: %w", p.Tree, err)
	}
	if a, err := os.Stat(dir); err == nil {
		if b, err := os.Stat(t.Path); err == nil && os.SameFile(a, b) {
			return t, nil // the same folder, through a symbolic link
		}
	}
	if info, err := os.Stat(t.Path); err == nil && info.IsDir() {
		// The tree's folder is still where the vault records it: dir is a
		// copy of it, or a pointer file made up to take it.
		return nil, cairn.Errorf(cairn.EINVALID, "%s is a copy of the working tree %s, which is still there", dir, t.Path).
			WithHint("Work in " + t.Path + ", or make a new tree with cairn worktree add DIR " + t.Branch + ".")
	}
	old := t.Path
	err = m.s.Update(ctx, func(tx *store.Tx) error { return m.st.MoveTree(ctx, tx.Backend(), t.ID, old, dir) })
	if err != nil {
		return nil, fmt.Errorf("record that working tree %s moved to %s: %w", old, dir, err)
	}
	t.Path = dir
	return t, nil
}

// Forget removes a working tree's records inside tx; its folder is not
// touched.
func (m *Manager) Forget(ctx context.Context, tx *store.Tx, t *Tree) error {
	return m.forget(ctx, tx, t.ID)
}

func (m *Manager) forget(ctx context.Context, tx *store.Tx, id int64) error {
	if err := m.st.DeleteTree(ctx, tx.Backend(), id); err != nil {
		return fmt.Errorf("forget working tree %d: %w", id, err)
	}
	return nil
}

// Moved records, inside tx, that the working tree recorded at the folder
// from is now at the folder to (the vault's own folder moved); it does
// nothing when no tree is recorded at from.
func (m *Manager) Moved(ctx context.Context, tx *store.Tx, from, to string) error {
	t, err := m.st.TreeAt(ctx, from)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return nil
	case err != nil:
		return fmt.Errorf("read the working tree %s: %w", from, err)
	}
	if err := m.st.MoveTree(ctx, tx.Backend(), t.ID, from, to); err != nil {
		return fmt.Errorf("record that the working tree %s moved to %s: %w", from, to, err)
	}
	return nil
}

// errNotOwned is the cause of the error for a working tree whose folder is
// no longer this vault's (see owned).
var errNotOwned = errors.New("not this vault's working tree")

// owned checks that a working tree's folder is still this vault's: the
// vault's own folder (its .cairn is this vault's directory), or a folder
// whose pointer names this vault (its .cairn directory is this one) and
// this tree. A copied or moved vault, or a folder reused by another vault,
// never gets its files written by this one.
func (m *Manager) owned(t *Tree) error {
	notOwned := func(why string) error {
		return cairn.Errorf(cairn.ECONFLICT, "%s is no longer a working tree of this vault: %s: %w", t.Path, why, errNotOwned).
			WithHint("cairn worktree remove " + t.Path + " forgets it (its folder is left as it is).")
	}
	fi, err := os.Lstat(filepath.Join(t.Path, PointerFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notOwned("it has no " + PointerFile)
	case err != nil:
		return fmt.Errorf("check %s: %w", t.Path, err)
	case fi.IsDir():
		if sameFile(filepath.Join(t.Path, PointerFile), m.lockDir) {
			return nil
		}
		return notOwned("it is another vault's folder")
	}
	p, err := ReadPointer(t.Path)
	if err != nil {
		return notOwned(err.Error())
	}
	if p.Tree != 0 && p.Tree != t.ID {
		return notOwned(fmt.Sprintf("its pointer names working tree %d", p.Tree))
	}
	if !sameFile(filepath.Join(p.Vault, PointerFile), m.lockDir) {
		return notOwned("its pointer names the vault at " + p.Vault)
	}
	return nil
}

// sameFile reports whether two paths name one existing file or folder.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
