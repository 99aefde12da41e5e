// Package app is cairn's application layer: its API is every operation a
// person, an agent or a program can ask of a vault. Every surface (the
// command line, the HTTP API, the MCP server, the web UI) parses its
// input, calls a method of App and formats what it returns; no surface
// holds logic, SQL or an admission request of its own.
//
// Each method takes a context that carries the acting principal
// (cairn.NewContextWithPrincipal); one that changes the vault without a
// principal is refused with EUNAUTHORIZED. Methods return domain values,
// never print, and return errors with cairn's codes (cairn.ErrorCode) and
// hints (cairn.ErrorHint).
//
// An App is opened once per process (Open, Init) and registers, once,
// the hooks every caller of the subsystems would otherwise have to
// remember: sources follow their proposals whatever decides them.
package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/agent"
	"cairn/auth"
	"cairn/eva"
	"cairn/ingest"
	"cairn/postgres"
	"cairn/postgres/pgdurable"
	"cairn/postgres/pgingest"
	"cairn/sqlite"
	"cairn/sqlite/sqldurable"
	"cairn/sqlite/sqlingest"
	"cairn/store"
	"cairn/vault"
	"cairn/worktree"
)

// Options configure opening a vault. The zero value gives the defaults.
type Options struct {
	// Logger receives what goes wrong beside an operation's work (a folder
	// sync that must wait, a rescue, a retry). Default: discard.
	Logger *slog.Logger
	// BusyTimeout is how long a write waits for another process. Default 5s.
	BusyTimeout time.Duration
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Crash, when set, is called at named points (crash tests).
	Crash func(point string)
	// Workers is how many jobs this process runs at once. Default: the
	// vault's setting agent.workers.
	Workers int
	// Unmapped keeps the database's readers from mapping its file: see
	// vault.Options.Unmapped.
	Unmapped bool
	// Bulk opens the vault for writing it whole once: see
	// vault.Options.Bulk.
	Bulk bool
	// Tools, when set, makes what serves cairn's MCP tools to the agents
	// of the jobs this process runs, on a view of their workspace (the
	// program wires package mcpserver here: it builds on this package).
	// Without it, agents get no MCP tools.
	Tools func(*App) agent.ServeTools
	// Drafts, when set, makes what opens cairn's MCP tools on a job's
	// draft, for the built-in agent (package mcpserver, wired by the
	// program). Without it, the built-in agent cannot run.
	Drafts func(*App) agent.DraftTools
	// Database, when set, is the URL of the PostgreSQL database holding
	// the vault; see vault.Options.Database.
	Database string
}

// App is an open vault and the operations on it.
type App struct {
	v       *vault.Vault
	tree    *worktree.Tree
	log     *slog.Logger
	now     func() time.Time
	crash   func(string)
	workers int
	ingest  *ingest.Service
	// tokens keeps the tokens and the audit of network requests;
	// authorizer checks secrets against them.
	tokens     auth.Storage
	authorizer *auth.Authorizer
}

// Open opens the vault that dir is in (dir itself, a folder below it, or a
// secondary working tree; see vault.Open). Opening brings every folder an
// interrupted process left behind its branch up to it: Repaired and
// Problems say what it found.
func Open(ctx context.Context, dir string, opts *Options) (*App, error) {
	opts = cmp.Or(opts, &Options{})
	v, t, err := vault.Open(ctx, dir, vaultOptions(opts))
	if err != nil {
		return nil, err
	}
	return newApp(v, t, opts), nil
}

// Init makes dir (created if missing) a vault and opens it; see vault.Init.
func Init(ctx context.Context, dir string, bare bool, opts *Options) (*App, error) {
	opts = cmp.Or(opts, &Options{})
	// An Eva brain opens in place when its eva.json is one Eva accepts;
	// one it would refuse is refused before anything is made.
	if data, err := os.ReadFile(filepath.Join(dir, eva.ManifestFile)); err == nil {
		if _, err := eva.ParseManifest(data); err != nil {
			return nil, err
		}
	}
	v, err := vault.Init(ctx, dir, bare, vaultOptions(opts))
	if err != nil {
		return nil, err
	}
	t, err := v.Main(ctx)
	if err != nil {
		v.Close()
		return nil, err
	}
	return newApp(v, t, opts), nil
}

// BootstrapEva writes into dir a new Eva brain of the profile named id:
// the files of Eva's layout it does not have yet (none is overwritten),
// with the profile's types declared in types/. Init then adopts them.
func BootstrapEva(dir, id string, s eva.Settings, now time.Time) ([]string, error) {
	p, ok := eva.Lookup(id)
	if !ok {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a profile; the profiles are %s", id, strings.Join(eva.IDs(), ", ")).
			WithHint("Try: cairn init --profile research DIR")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	return eva.Bootstrap(dir, p, s, now.Format(time.DateOnly))
}

func vaultOptions(opts *Options) *vault.Options {
	return &vault.Options{Logger: opts.Logger, BusyTimeout: opts.BusyTimeout, Crash: opts.Crash, Unmapped: opts.Unmapped, Bulk: opts.Bulk, Database: opts.Database}
}

func newApp(v *vault.Vault, t *worktree.Tree, opts *Options) *App {
	a := &App{
		v: v, tree: t,
		log:     cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:     opts.Now,
		crash:   opts.Crash,
		workers: opts.Workers,
	}
	if a.now == nil {
		a.now = time.Now
	}
	iopts := &ingest.Options{Logger: a.log, Now: a.now, Crash: a.crash}
	if opts.Tools != nil {
		iopts.Tools = opts.Tools(a)
	}
	if opts.Drafts != nil {
		iopts.Drafts = opts.Drafts(a)
	}
	// The storages of the vault's database: the only place the
	// application layer names a backend.
	if v.PG != nil {
		a.ingest = ingest.New(v, pgingest.New(v.PG), pgdurable.New(v.PG), iopts)
		a.tokens = postgres.NewAuthStorage(v.PG)
	} else {
		a.ingest = ingest.New(v, sqlingest.New(v.DB), sqldurable.New(v.DB), iopts)
		a.tokens = sqlite.NewAuthStorage(v.DB)
	}
	a.authorizer = auth.NewAuthorizer(a.tokens, a.now)
	// Sources follow their proposals, whatever decides them.
	v.Admit.OnDecided(a.ingest.Decided)
	return a
}

// closeWait bounds how long Close waits for the jobs this process runs
// to stop.
const closeWait = 30 * time.Second

// Close closes the vault. Jobs this process still runs (a Worker not
// stopped) are stopped first: they finish, or after 30 seconds have their
// contexts cancelled; a job cut short goes back to the queue, as a
// worker's that died would.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	err := a.ingest.Close(ctx)
	if cerr := a.v.Close(); err == nil {
		err = cerr
	}
	return err
}

// Root returns the folder that holds the vault's .cairn.
func (a *App) Root() string { return a.v.Root }

// Database says where the vault's database is: its SQLite file, or its
// PostgreSQL database's URL without the password.
func (a *App) Database() string { return a.v.Database() }

// Attached reports whether Init found the vault in its PostgreSQL database
// already and made the folder another place it is served from.
func (a *App) Attached() bool { return a.v.Attached }

// Bare reports whether the vault has no working tree.
func (a *App) Bare() bool { return a.v.Bare }

// Tree returns the working tree the vault was opened from, or nil (a bare
// vault, or a folder outside every working tree).
func (a *App) Tree() *worktree.Tree { return a.tree }

// Repaired says what opening the vault put right (a vault folder that
// moved or was copied, folders brought up to their branches).
func (a *App) Repaired() []string { return a.v.Repaired }

// Problems says what opening the vault found wrong and could not put
// right, each with what to do.
func (a *App) Problems() []string { return a.v.Problems }

// Vault returns the open vault, for tests and benchmarks that reach into
// a subsystem. Surfaces do not use it: what they need is a method of App.
func (a *App) Vault() *vault.Vault { return a.v }

// Principal returns who acts in ctx, or an EUNAUTHORIZED error when no one
// does: every change is recorded with its principal.
func Principal(ctx context.Context) (cairn.Principal, error) {
	p := cairn.PrincipalFromContext(ctx)
	if p == "" {
		return "", cairn.Errorf(cairn.EUNAUTHORIZED, "no principal acts: a change to a vault is recorded with who made it").
			WithHint("Name who acts: cairn --as user:NAME, or $CAIRN_USER")
	}
	if err := p.Validate(); err != nil {
		return "", err
	}
	return p, nil
}

// NeedTree returns an error, with a hint, when the vault was opened from
// a folder outside every working tree: the operation works on the files of
// one.
func (a *App) NeedTree() (*worktree.Tree, error) {
	if a.tree == nil {
		return nil, cairn.Errorf(cairn.EINVALID, "this command works in a working tree, and the current folder is not in one").
			WithHint("Run it inside the vault's folder, or in one made with cairn worktree add")
	}
	return a.tree, nil
}

// Policy returns the policy of main's head (the defaults before the first
// commit).
func (a *App) Policy(ctx context.Context) (*admit.Policy, error) {
	head, err := a.v.Store.Head(ctx, admit.Branch)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return &admit.Policy{}, nil
		}
		return nil, err
	}
	c, err := a.v.Store.ReadCommit(ctx, head)
	if err != nil {
		return nil, err
	}
	return admit.PolicyAt(ctx, a.v.Store, c.Tree)
}

// Branch returns the branch operations default to: the working tree's, or
// main.
func (a *App) Branch() string {
	if a.tree != nil {
		return a.tree.Branch
	}
	return admit.Branch
}

// ResolveCommit resolves a revision (a branch, a tag, a commit hash or a
// prefix of one) to its commit.
func (a *App) ResolveCommit(ctx context.Context, rev string) (*cairn.Commit, error) {
	h, err := a.v.Store.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	return a.v.Store.ReadCommit(ctx, h)
}

// TreeOf returns the tree of commit c; the empty tree for the zero hash (a
// branch before its first commit).
func (a *App) TreeOf(ctx context.Context, c cairn.Hash) (cairn.Hash, error) {
	if c.IsZero() {
		return store.EmptyTree, nil
	}
	cm, err := a.v.Store.ReadCommit(ctx, c)
	if err != nil {
		return cairn.Hash{}, err
	}
	return cm.Tree, nil
}
