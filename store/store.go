package store

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"cairn"
)

// Options configure a Store. The zero value gives the defaults.
type Options struct {
	// Logger receives the store's logs. Default: discard.
	Logger *slog.Logger
	// NodeCache is the number of decoded tree nodes kept in memory.
	// Default 4096 (about 40 MB with full leaves).
	NodeCache int
	// CommitCache is the number of decoded commits kept in memory.
	// Default 4096.
	CommitCache int
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Hooks run inside the transaction of every ref update, in order; an
	// error from a hook aborts the update. The index registers one here so
	// that no route can move main without updating it.
	Hooks []RefHook
	// MergeFile merges one file's contents when both sides of a merge
	// changed it. Default: merge.File (structural for Markdown, diff3 for
	// text, a conflict for binary files).
	MergeFile MergeFunc
	// Crash, when set, is called at named points of commits, garbage
	// collection and purges. Crash tests kill the process there; nil in
	// production.
	Crash func(point string)
}

// RefHook is called inside the transaction that updates a ref, after the
// update has been applied.
type RefHook func(ctx context.Context, tx *Tx, u cairn.RefUpdate) error

// Store is a versioned, content-addressed store over a backend. It is safe
// for concurrent use.
type Store struct {
	b       cairn.Backend
	log     *slog.Logger
	now     func() time.Time
	hooks   []RefHook
	merge   MergeFunc
	crash   func(string)
	nodes   *lru.Cache[cairn.Hash, *node]
	commits *lru.Cache[cairn.Hash, *cairn.Commit]
}

// New returns a Store over b. It checks that the backend holds the format
// this package understands.
func New(ctx context.Context, b cairn.Backend, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	v, err := b.FormatVersion(ctx)
	if err != nil {
		return nil, err
	}
	if v != FormatVersion {
		return nil, cairn.Errorf(cairn.EINVALID, "the vault's store format is version %d; this cairn reads version %d", v, FormatVersion).
			WithHint("Use a cairn release that matches the vault's format.")
	}
	s := &Store{
		b:     b,
		log:   cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:   opts.Now,
		hooks: opts.Hooks,
		merge: opts.MergeFile,
		crash: opts.Crash,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.merge == nil {
		s.merge = defaultMergeFile
	}
	s.nodes, _ = lru.New[cairn.Hash, *node](cmp.Or(opts.NodeCache, 4096))
	s.commits, _ = lru.New[cairn.Hash, *cairn.Commit](cmp.Or(opts.CommitCache, 4096))
	return s, nil
}

// point marks a named crash point.
func (s *Store) point(name string) {
	if s.crash != nil {
		s.crash(name)
	}
}

// Backend returns the backend the store writes to.
func (s *Store) Backend() cairn.Backend { return s.b }

// AddHook appends a ref hook; it must be called before the store is shared.
func (s *Store) AddHook(h RefHook) { s.hooks = append(s.hooks, h) }

// EmptyTree is the hash of the tree with no files. It is never stored.
var EmptyTree = nodeHash(encodeNode(0, nil))

var emptyNode = &node{level: 0, hash: EmptyTree, enc: encodeNode(0, nil)}

// node returns a decoded tree node.
func (s *Store) node(ctx context.Context, h cairn.Hash) (*node, error) {
	if h == EmptyTree {
		return emptyNode, nil
	}
	if n, ok := s.nodes.Get(h); ok {
		return n, nil
	}
	obj, err := s.b.GetObject(ctx, h)
	if err != nil {
		return nil, err
	}
	if obj.Kind != cairn.KindNode {
		return nil, cairn.Errorf(cairn.EINVALID, "object %s is a %s, not a tree", h.Short(), obj.Kind)
	}
	n, err := decodeNode(h, obj.Data)
	if err != nil {
		return nil, err
	}
	s.nodes.Add(h, n)
	return n, nil
}

// ReadBlob returns the content of a blob. A purged blob gives an error that
// wraps cairn.ErrPurged.
func (s *Store) ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error) {
	obj, err := s.b.GetObject(ctx, h)
	if err != nil {
		return nil, err
	}
	if obj.Kind != cairn.KindBlob {
		return nil, cairn.Errorf(cairn.EINVALID, "object %s is a %s, not file content", h.Short(), obj.Kind)
	}
	return obj.Data, nil
}

// ReadBlobs calls fn with the content of each of hs that is stored and not
// purged, in no particular order, possibly from several goroutines at once.
// It reads in bulk; use ReadBlob to learn why one is missing.
func (s *Store) ReadBlobs(ctx context.Context, hs []cairn.Hash, fn func(h cairn.Hash, data []byte) error) error {
	return s.b.GetObjects(ctx, hs, func(o cairn.Object) error {
		if o.Kind != cairn.KindBlob {
			return cairn.Errorf(cairn.EINVALID, "object %s is a %s, not file content", o.Hash.Short(), o.Kind)
		}
		return fn(o.Hash, o.Data)
	})
}

// ReadCommit returns a commit by its full hash. The commit is the caller's
// own: changing it changes nothing the store holds.
func (s *Store) ReadCommit(ctx context.Context, h cairn.Hash) (*cairn.Commit, error) {
	if c, ok := s.commits.Get(h); ok {
		return c.Clone(), nil
	}
	obj, err := s.b.GetObject(ctx, h)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "commit %s not found", h.Short()).WithHint("Try: cairn log")
		}
		return nil, err
	}
	if obj.Kind != cairn.KindCommit {
		return nil, cairn.Errorf(cairn.EINVALID, "object %s is a %s, not a commit", h.Short(), obj.Kind)
	}
	c, err := decodeCommit(h, obj.Data)
	if err != nil {
		return nil, err
	}
	s.commits.Add(h, c.Clone())
	return c, nil
}
