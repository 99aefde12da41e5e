package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"cairn"
	"cairn/index"
	"cairn/store"
	"cairn/worktree"
)

// metaRoot is the meta key holding the folder the vault was last opened in
// (absolute). The vault's own working tree is recorded under that path.
const metaRoot = "root"

func setMeta(ctx context.Context, tx *store.Tx, key, value string) error {
	_, err := tx.SQL().ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	return nil
}

// recordedRoot returns the folder the vault's own working tree is recorded
// under: the root recorded in meta, or, in a vault made before it was, the
// path of the first working tree of main (the one Init registers).
func (v *Vault) recordedRoot(ctx context.Context) (string, error) {
	var root string
	err := v.DB.Read().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaRoot).Scan(&root)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return root, err
	}
	err = v.DB.Read().QueryRowContext(ctx, `SELECT path FROM worktrees WHERE branch = ? ORDER BY id LIMIT 1`, index.Branch).Scan(&root)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return root, err
}

// relocate notices that the vault's folder is not the one its records
// name, and puts the records right (saying so in Repaired):
//
//   - the same folder under another name (a symbolic link): the recorded
//     name is kept, and v.Root becomes it;
//   - moved (nothing is left at the old place): the vault's own working tree
//     is recorded at the new place, and the pointer files of its other
//     working trees are rewritten to name it;
//   - copied (a vault is still at the old place, the original): this copy
//     becomes a vault of its own. Its own working tree is recorded here,
//     and the original's other working trees are forgotten in the copy, so
//     that nothing the copy does ever writes into the original's folders.
func (v *Vault) relocate(ctx context.Context) error {
	if v.Bare {
		return nil
	}
	if _, err := v.Trees.Get(ctx, v.Root); err == nil || cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return err
	}
	old, err := v.recordedRoot(ctx)
	if err != nil || old == "" {
		return err
	}
	if a, err := os.Stat(old); err == nil {
		if b, err := os.Stat(v.Root); err == nil && os.SameFile(a, b) {
			v.Root = old
			return nil
		}
	}
	trees, err := v.Trees.List(ctx)
	if err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(old, DirName, DBName))
	copied := err == nil
	err = v.Store.Update(ctx, func(tx *store.Tx) error {
		if _, err := tx.SQL().ExecContext(ctx, `UPDATE worktrees SET path = ? WHERE path = ?`, v.Root, old); err != nil {
			return fmt.Errorf("record the vault's new folder: %w", err)
		}
		if copied {
			for _, t := range trees {
				if t.Path != old {
					if err := v.Trees.Forget(ctx, tx, t); err != nil {
						return err
					}
				}
			}
		}
		return setMeta(ctx, tx, metaRoot, v.Root)
	})
	if err != nil {
		return err
	}
	if copied {
		v.Repaired = append(v.Repaired, fmt.Sprintf("this vault is a copy of the one at %s: it now keeps its own folder, %s", old, v.Root))
		for _, t := range trees {
			if t.Path != old {
				v.Repaired = append(v.Repaired, fmt.Sprintf("forgot the working tree %s of branch %s here: it belongs to the vault at %s", t.Path, t.Branch, old))
			}
		}
		return nil
	}
	v.Repaired = append(v.Repaired, fmt.Sprintf("the vault moved from %s to %s; recorded its new folder", old, v.Root))
	for _, t := range trees {
		if t.Path == old {
			continue
		}
		p, err := worktree.ReadPointer(t.Path)
		switch {
		case err != nil:
			v.Repaired = append(v.Repaired, fmt.Sprintf("the working tree %s of branch %s is missing (cairn worktree remove %s forgets it)", t.Path, t.Branch, t.Path))
		case p.Vault == old:
			p.Vault = v.Root
			if err := worktree.WritePointer(t.Path, *p); err != nil {
				return err
			}
			v.Repaired = append(v.Repaired, fmt.Sprintf("pointed the working tree %s at the vault's new folder", t.Path))
		}
	}
	return nil
}
