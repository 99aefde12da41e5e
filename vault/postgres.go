package vault

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"cairn"
	"cairn/durable"
	"cairn/postgres"
	"cairn/store"
	"cairn/worktree"
)

// DatabaseFile is the file in a vault folder's DirName that names the
// PostgreSQL database holding the vault (its URL), when the vault is not
// in the folder's own SQLite file. Several folders, on several machines,
// may name one database: each is a place a cairn process serves it from.
const DatabaseFile = "database"

// databaseOf returns the URL that root's DatabaseFile holds; "" when there
// is none.
func databaseOf(root string) (string, error) {
	if fi, err := os.Stat(filepath.Join(root, DirName)); err != nil || !fi.IsDir() {
		return "", nil // no vault folder, or a secondary working tree's pointer file
	}
	data, err := os.ReadFile(filepath.Join(root, DirName, DatabaseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the vault's database file: %w", err)
	}
	url := strings.TrimSpace(string(data))
	if !postgres.IsURL(url) {
		return "", cairn.Errorf(cairn.EINVALID, "%s does not hold a PostgreSQL URL", filepath.Join(root, DirName, DatabaseFile)).
			WithHint("It must hold one line: postgres://USER@HOST:PORT/DATABASE.")
	}
	return url, nil
}

// Place returns the folder this machine serves the vault in database url
// from when no vault folder is given: a folder of the user's cache named
// by the database (its host, port, name and schema, never its password).
func Place(url string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find a folder for the vault of %s: %w", postgres.Redact(url), err)
	}
	sum := sha256.Sum256([]byte(postgres.Redact(url)))
	return filepath.Join(dir, "cairn", "vaults", hex.EncodeToString(sum[:8])), nil
}

// attach makes dir a place of the vault in database url: dir/.cairn with
// the database file (only its owner reads it: the URL may hold a
// password). A folder that names another database is EINVALID.
func attach(dir, url string) error {
	have, err := databaseOf(dir)
	if err != nil {
		return err
	}
	if have != "" && have != url {
		return cairn.Errorf(cairn.EINVALID, "%s serves the vault in %s, not %s", dir, postgres.Redact(have), postgres.Redact(url)).
			WithHint("Use another folder, or edit " + filepath.Join(dir, DirName, DatabaseFile) + ".")
	}
	if have == "" {
		if _, err := os.Lstat(filepath.Join(dir, DirName, DBName)); err == nil {
			return cairn.Errorf(cairn.EINVALID, "%s holds a vault of its own (in %s)", dir, filepath.Join(DirName, DBName)).
				WithHint("Use another folder; cairn copy --to " + postgres.Redact(url) + " moves that vault into PostgreSQL.")
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, DirName), 0o700); err != nil {
		return fmt.Errorf("make %s: %w", dir, err)
	}
	if have == url {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, DirName, DatabaseFile), []byte(url+"\n"), 0o600)
}

// openPostgres opens the vault in the PostgreSQL database url, served from
// the folder root.
func openPostgres(ctx context.Context, root, url string, opts *Options) (*Vault, error) {
	log := cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	db, err := postgres.Open(ctx, url, &postgres.Options{LockTimeout: opts.BusyTimeout, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := durable.MigratePostgres(ctx, db.RiverPool()); err != nil {
		db.Close()
		return nil, err
	}
	v, err := wire(ctx, root, db, storages{vault: db, index: postgres.NewIndexStorage(db), trees: postgres.NewWorktreeStorage(db), admit: postgres.NewAdmitStorage(db)}, log, opts)
	if err != nil {
		return nil, err
	}
	v.PG = db
	return v, nil
}

// initPostgres makes the vault in database url, served from dir, or, when
// the database holds one already, makes dir another place it is served
// from (Attached is set).
func initPostgres(ctx context.Context, dir, url string, bare bool, opts *Options) (*Vault, error) {
	if !bare {
		return nil, cairn.Errorf(cairn.EINVALID, "a vault in PostgreSQL has no working tree: it is served, not edited in a folder").
			WithHint("Add --bare; people and agents work on it through cairn serve.")
	}
	undo := UndoInit(dir)
	if err := attach(dir, url); err != nil {
		undo()
		return nil, err
	}
	v, err := openPostgres(ctx, dir, url, opts)
	if err != nil {
		undo()
		return nil, err
	}
	v.Bare = true
	id, err := v.meta(ctx, metaID)
	if err == nil && id != "" {
		v.Attached = true
		v.Trees.VaultID = id
		return v, nil
	}
	if err == nil {
		id = newID()
		err = v.Store.Update(ctx, func(tx *store.Tx) error {
			if err := v.setMeta(ctx, tx, metaBare, "1"); err != nil {
				return err
			}
			return v.setMeta(ctx, tx, metaID, id)
		})
		v.Trees.VaultID = id
	}
	if err != nil {
		v.Close()
		undo()
		return nil, fmt.Errorf("init the vault in %s: %w", postgres.Redact(url), err)
	}
	return v, nil
}

// NewQueue returns the vault's job queue on the driver of its database;
// st keeps the records of workers (sqldurable.New or pgdurable.New).
func (v *Vault) NewQueue(st durable.Storage, cfg durable.Config) (*durable.Queue, error) {
	if v.PG != nil {
		return durable.NewPostgres(v.PG.RiverPool(), st, cfg)
	}
	return durable.New(v.DB.Write(), st, cfg)
}

// Check reports whether the vault's database is sound: SQLite's quick
// check of the file, or, in PostgreSQL (which checks its own pages), that
// the database answers.
func (v *Vault) Check(ctx context.Context) error {
	if v.PG != nil {
		_, err := v.PG.SchemaVersion(ctx)
		return err
	}
	return v.DB.QuickCheck(ctx)
}

// Database says where the vault's database is: the SQLite file's path, or
// the PostgreSQL database's URL without its password.
func (v *Vault) Database() string {
	if v.PG != nil {
		return postgres.Redact(v.PG.URL())
	}
	return v.DB.Path()
}

// openDatabase opens the vault in the database opts.Database names, from
// the vault folder found (root, or findErr when the current folder is in
// none): a folder that names that database, or, outside every vault, this
// machine's place for it (Place), made on first use.
func openDatabase(ctx context.Context, root string, findErr error, opts *Options) (*Vault, *worktree.Tree, error) {
	url := opts.Database
	if !postgres.IsURL(url) {
		return nil, nil, cairn.Errorf(cairn.EINVALID, "--database %q is not a PostgreSQL URL", postgres.Redact(url)).
			WithHint("Give it as postgres://USER@HOST:PORT/DATABASE.")
	}
	if findErr != nil {
		place, err := Place(url)
		if err != nil {
			return nil, nil, err
		}
		if err := attach(place, url); err != nil {
			return nil, nil, err
		}
		root = place
	} else if have, err := databaseOf(root); err != nil {
		return nil, nil, err
	} else if have != url {
		return nil, nil, cairn.Errorf(cairn.EINVALID, "the vault at %s is not the one in %s", root, postgres.Redact(url)).
			WithHint("Run the command outside that folder, or without --database.")
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

// identifyPostgres reads what the vault in PostgreSQL is: bare, and its
// identity. A database without a vault is ENOTFOUND, with a hint.
func (v *Vault) identifyPostgres(ctx context.Context) error {
	id, err := v.meta(ctx, metaID)
	if err != nil {
		return err
	}
	if id == "" {
		return cairn.Errorf(cairn.ENOTFOUND, "the database %s holds no vault", v.PG.Where()).
			WithHint("Make one: cairn init --bare --database URL DIR (or cairn copy --to URL from a vault).")
	}
	v.Bare, v.Trees.VaultID = true, id
	return nil
}
