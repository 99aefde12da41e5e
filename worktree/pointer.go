package worktree

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
}

// ReadPointer reads the pointer file of the folder dir: ENOTFOUND when dir
// has none, EINVALID when the file is not a pointer.
func ReadPointer(dir string) (*Pointer, error) {
	file := filepath.Join(dir, PointerFile)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s has no pointer file", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
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
		}
	}
	if p.Vault == "" || !filepath.IsAbs(p.Vault) {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is not a cairn pointer file", file).
			WithHint("A working tree's .cairn file names its vault (vault: /path/to/vault); make a new tree with cairn worktree add.")
	}
	return p, nil
}

// WritePointer writes the pointer file of the folder dir.
func WritePointer(dir string, p Pointer) error {
	data := "vault: " + p.Vault + "\n"
	if p.Tree != 0 {
		data += "tree: " + strconv.FormatInt(p.Tree, 10) + "\n"
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
	t, err := scanTree(m.db.QueryRowContext(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE id = ?`, p.Tree))
	if err != nil {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s names working tree %d, which this vault does not have", dir, p.Tree).
			WithHint("Make a new one with cairn worktree add DIR BRANCH.")
	}
	if there, err := ReadPointer(t.Path); err == nil && there.Tree == t.ID {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is a copy of the working tree %s, which is still there", dir, t.Path).
			WithHint("Work in " + t.Path + ", or make a new tree with cairn worktree add DIR " + t.Branch + ".")
	}
	old := t.Path
	err = m.s.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.SQL().ExecContext(ctx, `UPDATE worktrees SET path = ? WHERE id = ? AND path = ?`, dir, t.ID, old)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record that working tree %s moved to %s: %w", old, dir, err)
	}
	t.Path = dir
	return t, nil
}

// Forget removes a working tree's records inside tx; its folder is not
// touched.
func (m *Manager) Forget(ctx context.Context, tx *store.Tx, t *Tree) error {
	return forget(ctx, tx, t.ID)
}

func forget(ctx context.Context, tx *store.Tx, id int64) error {
	for _, q := range []string{`DELETE FROM worktree_files WHERE worktree = ?`, `DELETE FROM worktree_bases WHERE worktree = ?`, `DELETE FROM worktrees WHERE id = ?`} {
		if _, err := tx.SQL().ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("forget working tree %d: %w", id, err)
		}
	}
	return nil
}
