package vault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cairn"
	"cairn/index"
	"cairn/sqlite"
	"cairn/store"
	"cairn/worktree"
)

// Meta keys of a vault's identity and place.
const (
	// metaRoot holds the folder the vault was last opened in (absolute).
	// The vault's own working tree is recorded under that path.
	metaRoot = "root"
	// metaID holds the vault's identity: random, made once, and changed in
	// a copy when the copy is first opened, so that a copy and its original
	// can be told apart.
	metaID = "id"
	// metaBare is "1" in a vault without a working tree of its own.
	metaBare = "bare"
)

// setMeta records a meta value inside tx.
func (v *Vault) setMeta(ctx context.Context, tx *store.Tx, key, value string) error {
	if err := v.st.SetMeta(ctx, tx.Backend(), key, value); err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	return nil
}

// meta returns a meta value; "" when none is recorded.
func (v *Vault) meta(ctx context.Context, key string) (string, error) {
	value, err := v.st.Meta(ctx, key)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s: %w", key, err)
	}
	return value, nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// identify gives the vault an identity if it has none (a vault made before
// identities were recorded), without waiting for another process's write:
// the next open tries again. It reports whether the vault had one.
func (v *Vault) identify(ctx context.Context) (had bool, err error) {
	id, err := v.meta(ctx, metaID)
	if err != nil || id != "" {
		v.Trees.VaultID = id
		return true, err
	}
	id = newID()
	quick, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := v.Store.Update(quick, func(tx *store.Tx) error { return v.setMeta(quick, tx, metaID, id) }); err == nil {
		v.Trees.VaultID = id
	}
	return false, nil
}

// recordedRoot returns the folder the vault is recorded in: the root in
// meta, or, in a vault made before it was recorded, the path of the first
// working tree of main (the one Init registers); "" when neither is known.
func (v *Vault) recordedRoot(ctx context.Context) (string, error) {
	root, err := v.meta(ctx, metaRoot)
	if err != nil || root != "" || v.Bare {
		return root, err
	}
	trees, err := v.Trees.List(ctx)
	if err != nil {
		return "", err
	}
	var first *worktree.Tree
	for _, t := range trees {
		if t.Branch == index.Branch && (first == nil || t.ID < first.ID) {
			first = t
		}
	}
	if first == nil {
		return "", nil
	}
	return first.Path, nil
}

// relocate notices that the vault's folder is not the one its records
// name, and puts the records right (saying so in Repaired):
//
//   - the same folder under another name (a symbolic link): the recorded
//     name is kept, and v.Root becomes it;
//   - copied (the database at the old place is this vault's original: it
//     has the identity this one had): this copy becomes a vault of its own,
//     with an identity of its own. Its own folder is its working tree of
//     main, and the original's other working trees are forgotten here, so
//     nothing the copy does ever writes into the original's folders;
//   - moved (nothing at the old place, or another vault there): the
//     vault's own working tree is recorded at the new place, the pointer
//     files of its other working trees that name the old place are
//     rewritten to name the new one, and a tree whose pointer names some
//     other vault is forgotten.
//
// A bare vault, which has no folder of its own, is relocated the same way
// for its working trees. Whatever relocate decides, a sync writes only into
// a folder that is still this vault's (worktree's ownership check).
func (v *Vault) relocate(ctx context.Context) error {
	had, err := v.identify(ctx)
	if err != nil {
		return err
	}
	old, err := v.recordedRoot(ctx)
	if err != nil || old == "" || old == v.Root {
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
	oldID, err := sqlite.ReadMeta(ctx, filepath.Join(old, DirName, DBName), metaID)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(filepath.Join(old, DirName, DBName))
	thereIs := statErr == nil
	// A copy when the old place holds this vault's original: the same
	// identity, or, for a vault that had none recorded, any vault there.
	copied := thereIs && (oldID == v.Trees.VaultID && oldID != "" || !had)
	type repoint struct {
		t *worktree.Tree
		p *worktree.Pointer
	}
	var forget []*worktree.Tree
	var rewrite []repoint
	for _, t := range trees {
		if t.Path == old {
			continue
		}
		p, err := worktree.ReadPointer(t.Path)
		switch {
		case copied:
			forget = append(forget, t)
		case err != nil:
			v.Repaired = append(v.Repaired, fmt.Sprintf("the working tree %s of branch %s is missing (cairn worktree remove %s forgets it)", t.Path, t.Branch, t.Path))
		case p.Vault == old && (p.Tree == 0 || p.Tree == t.ID) && (p.ID == "" || p.ID == v.Trees.VaultID):
			rewrite = append(rewrite, repoint{t, p})
		case p.Vault != v.Root:
			forget = append(forget, t) // another vault's tree now
		}
	}
	fresh := ""
	if copied {
		fresh = newID()
	}
	err = v.Store.Update(ctx, func(tx *store.Tx) error {
		if err := v.Trees.Moved(ctx, tx, old, v.Root); err != nil {
			return fmt.Errorf("record the vault's new folder: %w", err)
		}
		for _, t := range forget {
			if err := v.Trees.Forget(ctx, tx, t); err != nil {
				return err
			}
		}
		if fresh != "" {
			if err := v.setMeta(ctx, tx, metaID, fresh); err != nil {
				return err
			}
		}
		return v.setMeta(ctx, tx, metaRoot, v.Root)
	})
	if err != nil {
		return err
	}
	if copied {
		v.Trees.VaultID = fresh
		v.Repaired = append(v.Repaired, fmt.Sprintf("this vault is a copy of the one at %s: it now keeps its own folder, %s, and an identity of its own", old, v.Root))
	} else {
		v.Repaired = append(v.Repaired, fmt.Sprintf("the vault moved from %s to %s; recorded its new folder", old, v.Root))
	}
	for _, t := range forget {
		v.Repaired = append(v.Repaired, fmt.Sprintf("forgot the working tree %s of branch %s here: it belongs to another vault (its folder is left as it is)", t.Path, t.Branch))
	}
	for _, r := range rewrite {
		r.p.Vault, r.p.Tree, r.p.ID = v.Root, r.t.ID, v.Trees.VaultID
		if err := worktree.WritePointer(r.t.Path, *r.p); err != nil {
			return err
		}
		v.Repaired = append(v.Repaired, fmt.Sprintf("pointed the working tree %s at the vault's new folder", r.t.Path))
	}
	return nil
}
