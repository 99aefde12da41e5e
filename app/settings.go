package app

import (
	"cmp"
	"context"
	"fmt"

	"cairn"
	"cairn/admit"
	"cairn/store"
	"cairn/worktree"
)

// SettingChange is what setting one key of cairn.yaml did.
type SettingChange struct {
	Key   string `json:"id"`
	Value string `json:"value"`
	// Unchanged is set when cairn.yaml held the value already: nothing was
	// submitted.
	Unchanged bool `json:"unchanged,omitempty"`
	// Outcome is admission's outcome of the edit; nil when Unchanged. When
	// it did not admit the edit (held, rejected), the setting is as before.
	Outcome *admit.Outcome `json:"outcome,omitempty"`
	// Sync is what bringing main's folder up to main changed; nil unless
	// the edit was admitted.
	Sync *worktree.SyncReport `json:"sync,omitempty"`
}

// Settings returns every key of main's cairn.yaml, in order, with its value,
// default and help.
func (a *App) Settings(ctx context.Context) ([]admit.Setting, error) {
	pol, err := a.Policy(ctx)
	if err != nil {
		return nil, err
	}
	return pol.Settings(), nil
}

// Setting returns one key of main's cairn.yaml with its value, default and
// help. A key cairn.yaml cannot hold is refused (EINVALID) with the keys it
// can.
func (a *App) Setting(ctx context.Context, key string) (*admit.Setting, error) {
	pol, err := a.Policy(ctx)
	if err != nil {
		return nil, err
	}
	val, err := pol.Get(key)
	if err != nil {
		return nil, err
	}
	s := &admit.Setting{Key: key, Value: val}
	for _, known := range pol.Settings() {
		if known.Key == key {
			s.Default, s.Help = known.Default, known.Help
		}
	}
	return s, nil
}

// SetSetting sets key of cairn.yaml to value (an empty value removes the
// key, so its default applies), keeping the file's comments and order, as
// the principal's commit on main through admission (route "settings"), and
// brings main's folder up to it. It needs a principal (EUNAUTHORIZED); an
// unknown key or a value the key does not accept is refused (EINVALID,
// with a hint) before anything changes; main without a first commit gives
// ENOTFOUND. A change admission holds or rejects is returned in Outcome,
// not as an error.
func (a *App) SetSetting(ctx context.Context, key, value string) (*SettingChange, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err // refused before anything is read
	}
	defer a.v.MarkBusy("cairn settings set")()
	head, err := a.v.Store.Head(ctx, admit.Branch)
	if err != nil {
		return nil, err
	}
	tree, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, err
	}
	var data []byte
	if e, err := a.v.Store.Get(ctx, tree, admit.PolicyFile); err == nil {
		if data, err = a.v.Store.ReadBlob(ctx, e.Blob); err != nil {
			return nil, fmt.Errorf("read %s: %w", admit.PolicyFile, err)
		}
	} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, fmt.Errorf("read %s: %w", admit.PolicyFile, err)
	}
	next, err := admit.SetPolicy(data, key, value)
	if err != nil {
		return nil, err
	}
	res := &SettingChange{Key: key, Value: value}
	if string(next) == string(data) {
		res.Unchanged = true
		return res, nil
	}
	b := a.v.Store.NewBatch()
	change := store.FileChange{Path: admit.PolicyFile, Data: next}
	if len(next) == 0 {
		change = store.FileChange{Path: admit.PolicyFile, Delete: true}
	}
	newTree, err := b.Edit(ctx, tree, []store.FileChange{change})
	if err != nil {
		return nil, fmt.Errorf("edit %s: %w", admit.PolicyFile, err)
	}
	res.Outcome, err = a.submit(ctx, submission{
		Route: "settings", Base: head, Tree: newTree, Batch: b,
		Message: fmt.Sprintf("settings: %s = %s", key, cmp.Or(value, "(default)")),
	})
	if err != nil {
		return nil, err
	}
	if !res.Outcome.Admitted() {
		return res, nil
	}
	res.Sync = a.syncMain(ctx)
	return res, nil
}
