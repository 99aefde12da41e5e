package app

import (
	"context"
	"fmt"

	"cairn"
	"cairn/postgres"
	"cairn/vault"
)

// CopyResult says what a copy made and moved.
type CopyResult struct {
	// To is where the copy is: the PostgreSQL database (without its
	// password) or the folder of the SQLite vault; Root the folder it is
	// served from.
	To, Root string
	// Rows counts the rows moved, by table.
	Rows map[string]int64 `json:"rows"`
	// Head is main's head in the copy: the source's.
	Head cairn.Hash `json:"head,omitzero"`
}

// Copy moves the whole vault, with its history, into a new vault at to: a
// PostgreSQL database (postgres://…) when the vault is in SQLite, or a
// folder (made bare, with its own SQLite file) when the vault is in
// PostgreSQL. Every object and commit keeps its hash; the proposals, their
// audit, the events, the sources, the tokens and the OAuth records come
// along; the copy's index is rebuilt from its commits. A destination that
// holds history, and a vault with sources still being integrated (their
// jobs do not come along), are refused. It is a command of the machine
// the vault is on: no network surface offers it.
func (a *App) Copy(ctx context.Context, to string) (*CopyResult, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err
	}
	var dst *vault.Vault
	var err error
	var rows postgres.TransferStats
	switch {
	case postgres.IsURL(to) && a.v.DB != nil:
		place, perr := vault.Place(to)
		if perr != nil {
			return nil, perr
		}
		dst, err = vault.Init(ctx, place, true, &vault.Options{Logger: a.log, Database: to})
		if err == nil {
			rows, err = dst.PG.CopyFromSQLite(ctx, a.v.DB.Read())
		}
	case postgres.IsURL(to):
		return nil, cairn.Errorf(cairn.EINVALID, "the vault is in PostgreSQL already").
			WithHint("Copy it to a folder first (cairn copy --to DIR), or copy the database with pg_dump.")
	case a.v.PG == nil:
		return nil, cairn.Errorf(cairn.EINVALID, "the vault is in SQLite already: --to names a PostgreSQL database (postgres://…) for it").
			WithHint("To copy the folder, copy it (cp -a): cairn tells the copy from the original when it opens.")
	default:
		undo := vault.UndoInit(to)
		dst, err = vault.Init(ctx, to, true, &vault.Options{Logger: a.log})
		if err == nil {
			if rows, err = a.v.PG.CopyToSQLite(ctx, dst.DB.Write()); err != nil {
				// The vault Init made there is empty: take it away, and
				// the folder if Init made it, so a refused copy leaves
				// things as it found them.
				dst.Close()
				dst = nil
				undo()
			}
		}
	}
	if err != nil {
		if dst != nil {
			dst.Close()
		}
		return nil, fmt.Errorf("copy the vault to %s: %w", postgres.Redact(to), err)
	}
	res := &CopyResult{To: dst.Database(), Root: dst.Root, Rows: rows}
	root := dst.Root
	if err := dst.Close(); err != nil {
		return nil, err
	}
	// Opening the copy rebuilds its index from main's head.
	check, _, err := vault.Open(ctx, root, &vault.Options{Logger: a.log})
	if err != nil {
		return nil, fmt.Errorf("open the copy: %w", err)
	}
	defer check.Close()
	if h, err := check.Store.Head(ctx, "main"); err == nil {
		res.Head = h
	}
	return res, nil
}
