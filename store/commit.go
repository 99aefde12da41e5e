package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"cairn"
)

// Ref name prefixes in the backend.
const (
	branchPrefix = "heads/"
	tagPrefix    = "tags/"
)

// Limits on commit fields.
const (
	maxMessageBytes = 64 << 10
	maxMetaKeyBytes = 256
	maxMetaBytes    = 64 << 10
	maxParents      = 16
)

const refHint = "Branch and tag names use letters, digits, '.', '_', '-' and '/' between parts, e.g. main or proposals/42."

// ValidateRefName checks a branch or tag name: 1–200 bytes of letters,
// digits, '.', '_' and '-', in parts separated by '/'; no part is empty or
// starts with '.'.
func ValidateRefName(name string) error {
	if name == "" || len(name) > 200 {
		return cairn.Errorf(cairn.EINVALID, "ref name %q must be 1 to 200 bytes", name).WithHint(refHint)
	}
	if strings.Contains(name, "..") {
		return cairn.Errorf(cairn.EINVALID, "ref name %q contains \"..\"", name).WithHint(refHint)
	}
	if name == "HEAD" || strings.HasPrefix(name, "refs/") || strings.HasPrefix(name, "-") {
		return cairn.Errorf(cairn.EINVALID, "ref name %q would read as git's HEAD, a full ref or an option", name).WithHint(refHint)
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return cairn.Errorf(cairn.EINVALID, "ref name %q has an empty part or a part starting with '.'", name).WithHint(refHint)
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return cairn.Errorf(cairn.EINVALID, "ref name %q: character %q is not allowed", name, r).WithHint(refHint)
			}
		}
	}
	return nil
}

// CommitRequest describes a new commit and the branch it advances.
type CommitRequest struct {
	// Branch is the branch to advance (required).
	Branch string
	// Expected is the branch head the change was based on. The zero hash
	// means the branch must not exist yet. A different head is a conflict.
	Expected cairn.Hash
	// Parents default to [Expected] (none when Expected is zero).
	Parents []cairn.Hash
	// Tree is the new tree (required; EmptyTree for no files).
	Tree cairn.Hash
	// Principal is who makes the commit (required).
	Principal cairn.Principal
	// Message says why (required, at most 64 KB).
	Message string
	// Meta is structured metadata: job id, source hash, proposal id, verdict.
	Meta map[string]string
	// Time defaults to now.
	Time time.Time
	// AllowEmpty permits a single-parent commit whose tree equals its
	// parent's. Default false: such a commit is refused as "nothing to
	// commit".
	AllowEmpty bool
}

// Tx is a write transaction of the store: ref updates, the objects they
// make reachable, and the rows of other subsystems (via SQL) commit together.
type Tx struct {
	s       *Store
	tx      cairn.Tx
	after   []func()
	batches []*Batch                     // batches whose objects this transaction wrote
	pending map[cairn.Hash]*cairn.Commit // commits this transaction wrote
	values  map[any]any
}

// SetValue attaches a value to the transaction under key, for hooks that
// must know what the code that opened it established (the admission
// pipeline marks the commits it admitted).
func (tx *Tx) SetValue(key, value any) {
	if tx.values == nil {
		tx.values = map[any]any{}
	}
	tx.values[key] = value
}

// Value returns the value attached under key, or nil.
func (tx *Tx) Value(key any) any { return tx.values[key] }

// Update runs fn in one write transaction. Nothing fn did is kept if it
// returns an error.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	var t *Tx
	err := s.b.Update(ctx, func(btx cairn.Tx) error {
		t = &Tx{s: s, tx: btx}
		return fn(t)
	})
	if err != nil {
		return err
	}
	for _, f := range t.after {
		f()
	}
	return nil
}

// Inspect runs fn in a transaction that reads one view of the store and
// keeps nothing. A backend that can (SQLite, PostgreSQL) runs it without
// the write lock, so that others write meanwhile, and fn may write only
// what the backend keeps apart from the vault (its temporary tables);
// otherwise it is Update, rolled back.
func (s *Store) Inspect(ctx context.Context, fn func(*Tx) error) error {
	if in, ok := s.b.(interface {
		Inspect(context.Context, func(cairn.Tx) error) error
	}); ok {
		return in.Inspect(ctx, func(btx cairn.Tx) error { return fn(&Tx{s: s, tx: btx}) })
	}
	err := s.Update(ctx, func(tx *Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errInspected
	})
	if errors.Is(err, errInspected) {
		return nil
	}
	return err
}

// errInspected rolls back the Update that stands in for Inspect.
var errInspected = errors.New("store: inspected")

// Raw calls fn with the database driver's connection, for bulk writers
// that bind values to driver statements directly. It reports false, without
// calling fn, when the backend does not give its connection.
func (tx *Tx) Raw(fn func(driverConn any) error) (bool, error) {
	r, ok := tx.tx.(interface{ Raw(func(any) error) error })
	if !ok {
		return false, nil
	}
	return true, r.Raw(fn)
}

// Store returns the store the transaction belongs to.
func (tx *Tx) Store() *Store { return tx.s }

// AfterCommit registers f to run once the transaction has committed.
func (tx *Tx) AfterCommit(f func()) { tx.after = append(tx.after, f) }

// Commit writes a commit, the batch's objects that its tree reaches, and
// moves the branch by compare-and-swap, in one transaction. See
// [Tx.Commit] for the errors.
func (s *Store) Commit(ctx context.Context, b *Batch, req CommitRequest) (*cairn.Commit, error) {
	var c *cairn.Commit
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		c, err = tx.Commit(ctx, b, req)
		return err
	})
	return c, err
}

// Commit writes a commit inside the transaction. Errors: a malformed
// request (EINVALID); a missing parent or tree (ENOTFOUND); a branch head
// other than req.Expected (ECONFLICT: nothing is written).
func (tx *Tx) Commit(ctx context.Context, b *Batch, req CommitRequest) (*cairn.Commit, error) {
	s := tx.s
	if err := ValidateRefName(req.Branch); err != nil {
		return nil, err
	}
	// Check the head first: a stale base is the most common refusal and
	// the most useful thing to report.
	cur, err := tx.tx.Ref(ctx, branchPrefix+req.Branch)
	switch {
	case err == nil && cur.Hash != req.Expected:
		if req.Expected.IsZero() {
			return nil, cairn.Errorf(cairn.ECONFLICT, "branch %s already exists (at %s)", req.Branch, cur.Hash.Short())
		}
		return nil, cairn.Errorf(cairn.ECONFLICT, "branch %s moved: expected %s, found %s", req.Branch, req.Expected.Short(), cur.Hash.Short()).
			WithHint("Another change landed first; merge it and try again.")
	case err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND:
		return nil, err
	case err != nil && !req.Expected.IsZero():
		return nil, cairn.Errorf(cairn.ECONFLICT, "branch %s does not exist (expected it at %s)", req.Branch, req.Expected.Short()).
			WithHint("Try: cairn branch")
	}
	if req.Parents == nil && !req.Expected.IsZero() {
		req.Parents = []cairn.Hash{req.Expected}
	}
	c, err := tx.WriteCommit(ctx, b, req)
	if err != nil {
		return nil, err
	}
	err = tx.UpdateRef(ctx, cairn.RefUpdate{
		Name:      branchPrefix + req.Branch,
		Kind:      cairn.RefBranch,
		Old:       req.Expected,
		New:       c.Hash,
		Principal: req.Principal,
		Message:   firstLine(req.Message),
	})
	if err != nil {
		return nil, err
	}
	s.point("commit:ref-updated")
	return c, nil
}

// WriteCommit writes a commit and the batch's objects its tree reaches,
// without moving any branch: req.Branch and req.Expected are ignored and
// the parents are req.Parents. The admission pipeline writes a proposal's
// commit this way and makes it a parent of the commit that admits it.
func (tx *Tx) WriteCommit(ctx context.Context, b *Batch, req CommitRequest) (*cairn.Commit, error) {
	s := tx.s
	if b == nil {
		b = s.NewBatch()
	}
	if err := req.Principal.Validate(); err != nil {
		return nil, err
	}
	if err := validateMessage(req.Message, req.Meta); err != nil {
		return nil, err
	}
	parents := req.Parents
	if len(parents) > maxParents {
		return nil, cairn.Errorf(cairn.EINVALID, "a commit has at most %d parents, not %d", maxParents, len(parents))
	}
	if req.Tree.IsZero() {
		return nil, cairn.Errorf(cairn.EINVALID, "commit: no tree given")
	}
	if _, err := b.node(ctx, req.Tree); err != nil {
		if _, err2 := tx.node(ctx, req.Tree); err2 != nil {
			return nil, cairn.Errorf(cairn.ErrorCode(err), "commit: tree %s: %w", req.Tree.Short(), err)
		}
	}
	for i, p := range parents {
		pc, err := tx.ReadCommit(ctx, p)
		if err != nil {
			return nil, err
		}
		if i == 0 && len(parents) == 1 && pc.Tree == req.Tree && !req.AllowEmpty {
			return nil, cairn.Errorf(cairn.EINVALID, "nothing to commit: the tree is the same as %s's", p.Short()).
				WithHint("Try: cairn status")
		}
	}
	t := req.Time
	if t.IsZero() {
		t = s.now()
	}
	c := &cairn.Commit{
		Tree:      req.Tree,
		Parents:   parents,
		Principal: req.Principal,
		Time:      t.UTC(),
		Message:   req.Message,
		Meta:      req.Meta,
	}
	if len(c.Meta) == 0 {
		c.Meta = nil
	}
	enc := encodeCommit(c)
	c.Hash = commitHash(enc)
	objs := append(b.reachable(req.Tree), cairn.Object{Hash: c.Hash, Kind: cairn.KindCommit, Data: enc})
	if err := tx.tx.PutObjects(ctx, objs); err != nil {
		return nil, err
	}
	s.point("commit:objects-written")
	tx.Use(b)
	if tx.pending == nil {
		tx.pending = map[cairn.Hash]*cairn.Commit{}
	}
	kept := c.Clone() // the caller owns c
	tx.pending[c.Hash] = kept
	tx.AfterCommit(func() {
		s.point("commit:committed")
		b.written(objs)
		s.commits.Add(c.Hash, kept)
	})
	return c, nil
}

// Use makes the batch's objects visible to reads inside the transaction
// (hooks, the index) before a commit writes them.
func (tx *Tx) Use(b *Batch) {
	if !slices.Contains(tx.batches, b) {
		tx.batches = append(tx.batches, b)
	}
}

func validateMessage(msg string, meta map[string]string) error {
	if strings.TrimSpace(msg) == "" {
		return cairn.Errorf(cairn.EINVALID, "the commit message is empty").WithHint("Say why: cairn commit -m MESSAGE")
	}
	if len(msg) > maxMessageBytes || !utf8.ValidString(msg) {
		return cairn.Errorf(cairn.EINVALID, "the commit message must be valid UTF-8 of at most %d bytes", maxMessageBytes)
	}
	total := 0
	for k, v := range meta {
		if k == "" || len(k) > maxMetaKeyBytes || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return cairn.Errorf(cairn.EINVALID, "commit metadata key %q must be 1 to %d bytes of UTF-8", k, maxMetaKeyBytes)
		}
		total += len(k) + len(v)
	}
	if total > maxMetaBytes {
		return cairn.Errorf(cairn.EINVALID, "commit metadata is %d bytes; the limit is %d", total, maxMetaBytes)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// UpdateRef applies a compare-and-swap to a ref and runs the store's hooks.
func (tx *Tx) UpdateRef(ctx context.Context, u cairn.RefUpdate) error {
	if err := tx.tx.UpdateRef(ctx, u); err != nil {
		return err
	}
	for _, h := range tx.s.hooks {
		if err := h(ctx, tx, u); err != nil {
			return err
		}
	}
	return nil
}

// Head returns the commit a branch points at, read inside the transaction.
func (tx *Tx) Head(ctx context.Context, branch string) (cairn.Hash, error) {
	r, err := tx.tx.Ref(ctx, branchPrefix+branch)
	if err != nil {
		return cairn.Hash{}, branchErr(branch, err)
	}
	return r.Hash, nil
}

// Pin keeps h and what it reaches from garbage collection until expires
// (zero: never).
func (tx *Tx) Pin(ctx context.Context, h cairn.Hash, reason string, expires time.Time) error {
	return tx.tx.SetPin(ctx, cairn.Pin{Hash: h, Reason: reason, Created: tx.s.now(), Expires: expires})
}

// Unpin removes the pin (h, reason).
func (tx *Tx) Unpin(ctx context.Context, h cairn.Hash, reason string) error {
	return tx.tx.DeletePin(ctx, h, reason)
}

func branchErr(branch string, err error) error {
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return cairn.Errorf(cairn.ENOTFOUND, "branch %s does not exist", branch).WithHint("Try: cairn branch")
	}
	return err
}

// Head returns the commit a branch points at.
func (s *Store) Head(ctx context.Context, branch string) (cairn.Hash, error) {
	r, err := s.b.Ref(ctx, branchPrefix+branch)
	if err != nil {
		return cairn.Hash{}, branchErr(branch, err)
	}
	return r.Hash, nil
}

// Branches returns every branch, sorted by name.
func (s *Store) Branches(ctx context.Context) ([]cairn.Ref, error) {
	return s.refs(ctx, branchPrefix)
}

// Tags returns every tag, sorted by name.
func (s *Store) Tags(ctx context.Context) ([]cairn.Ref, error) {
	return s.refs(ctx, tagPrefix)
}

func (s *Store) refs(ctx context.Context, prefix string) ([]cairn.Ref, error) {
	refs, err := s.b.Refs(ctx, prefix)
	if err != nil {
		return nil, err
	}
	for i := range refs {
		refs[i].Name = strings.TrimPrefix(refs[i].Name, prefix)
	}
	return refs, nil
}

// SetBranch moves (or creates, or with a zero at deletes) a branch by
// compare-and-swap: expected is the head the caller saw (zero: the branch
// must not exist). A different head is ECONFLICT; a name taken by a tag is
// EINVALID.
func (s *Store) SetBranch(ctx context.Context, name string, expected, at cairn.Hash, p cairn.Principal, msg string) error {
	if err := ValidateRefName(name); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if !at.IsZero() {
		if _, err := s.ReadCommit(ctx, at); err != nil {
			return err
		}
	}
	return s.Update(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Ref(ctx, tagPrefix+name); err == nil {
			return cairn.Errorf(cairn.EINVALID, "%s is a tag; a branch cannot have the same name", name)
		}
		return tx.UpdateRef(ctx, cairn.RefUpdate{
			Name: branchPrefix + name, Kind: cairn.RefBranch,
			Old: expected, New: at, Principal: p, Message: msg,
		})
	})
}

// CreateTag makes an immutable tag at a commit. A tag that exists, or a name
// taken by a branch, is refused.
func (s *Store) CreateTag(ctx context.Context, name string, at cairn.Hash, p cairn.Principal, msg string) error {
	if err := ValidateRefName(name); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if _, err := s.ReadCommit(ctx, at); err != nil {
		return err
	}
	return s.Update(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Ref(ctx, branchPrefix+name); err == nil {
			return cairn.Errorf(cairn.EINVALID, "%s is a branch; a tag cannot have the same name", name)
		}
		return tx.UpdateRef(ctx, cairn.RefUpdate{
			Name: tagPrefix + name, Kind: cairn.RefTag, New: at, Principal: p, Message: msg,
		})
	})
}

// RefLog returns the updates of a branch (or, with an empty name, of every
// ref) newer than since, newest first.
func (s *Store) RefLog(ctx context.Context, branch string, since time.Time) ([]cairn.RefLogEntry, error) {
	name := ""
	if branch != "" {
		name = branchPrefix + branch
	}
	return s.b.RefLog(ctx, name, since)
}
