package cairn

import (
	"context"
	"strings"
	"time"
)

// ObjectKind is the type of a stored object; it is also the domain-separation
// prefix of the object's hash (docs/format.md).
type ObjectKind uint8

// Object kinds.
const (
	KindBlob   ObjectKind = 1 // file content, byte for byte
	KindNode   ObjectKind = 2 // a node of the vault tree
	KindCommit ObjectKind = 3 // a commit
)

// String returns "blob", "node" or "commit".
func (k ObjectKind) String() string {
	switch k {
	case KindBlob:
		return "blob"
	case KindNode:
		return "node"
	case KindCommit:
		return "commit"
	}
	return "unknown"
}

// Object is a stored object with its canonical (uncompressed) bytes. A
// backend may compress Data at rest; it always returns it as written.
type Object struct {
	Hash Hash
	Kind ObjectKind
	Data []byte
}

// RefKind distinguishes branches, which move by compare-and-swap, from tags,
// which never move.
type RefKind uint8

// Ref kinds.
const (
	RefBranch RefKind = 1
	RefTag    RefKind = 2
)

// Ref is a named pointer to a commit.
type Ref struct {
	Name    string    `json:"name"`
	Kind    RefKind   `json:"kind"`
	Hash    Hash      `json:"commit"`
	Updated time.Time `json:"updated"`
}

// RefUpdate is one compare-and-swap of a ref. Old is the value the caller
// expects (zero: the ref must not exist); New is the value to set (zero:
// delete the ref). Principal and Message go into the ref log.
type RefUpdate struct {
	Name      string
	Kind      RefKind
	Old, New  Hash
	Principal Principal
	Message   string
}

// RefLogEntry records one ref update.
type RefLogEntry struct {
	Name      string    `json:"ref"`
	Old       Hash      `json:"old"`
	New       Hash      `json:"new"`
	Principal Principal `json:"principal"`
	Message   string    `json:"message"`
	Time      time.Time `json:"time"`
}

// Pin keeps an object and everything it reaches from garbage collection,
// for a reason, until it expires (a zero Expires never expires).
type Pin struct {
	Hash    Hash      `json:"hash"`
	Reason  string    `json:"reason"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires,omitzero"`
}

// Purge records the removal of an object's content.
type Purge struct {
	Hash      Hash      `json:"hash"`
	Principal Principal `json:"principal"`
	Reason    string    `json:"reason"`
	Time      time.Time `json:"time"`
}

// ObjectInfo describes a stored object without its content.
type ObjectInfo struct {
	Hash    Hash
	Kind    ObjectKind
	Size    int64 // uncompressed bytes
	Created time.Time
	Purged  bool
}

// Backend stores objects and refs. It is the one interface every storage
// engine implements (sqlite, postgres); the storetest package holds the
// behaviour suite they must all pass. Objects are immutable and may be
// written before the transaction that makes them reachable; refs change only
// inside Update.
//
// Errors: a missing object or ref has code ENOTFOUND; an object whose content
// was purged wraps ErrPurged; a failed compare-and-swap has code ECONFLICT; a
// write lock that cannot be had within the busy timeout has code
// EUNAVAILABLE.
type Backend interface {
	// FormatVersion returns the store format recorded in the database.
	FormatVersion(ctx context.Context) (int, error)

	// GetObject returns one object.
	GetObject(ctx context.Context, h Hash) (Object, error)
	// GetObjects calls fn with each of the objects hs that is stored and
	// not purged, in no particular order, possibly from several goroutines
	// at once; missing and purged ones are skipped. It reads in bulk, for
	// index builds and exports.
	GetObjects(ctx context.Context, hs []Hash, fn func(Object) error) error
	// HasObjects reports which of hs are stored (purged objects count as stored).
	HasObjects(ctx context.Context, hs []Hash) ([]bool, error)
	// PutObjects stores objects in short transactions of its own; storing an
	// object that exists is a no-op.
	PutObjects(ctx context.Context, objs []Object) error
	// ObjectsByPrefix returns up to limit hashes of objects of the given
	// kind whose hex form starts with prefix (1 to 64 hex digits).
	ObjectsByPrefix(ctx context.Context, kind ObjectKind, prefix string, limit int) ([]Hash, error)
	// Objects calls fn for every stored object, in no particular order.
	Objects(ctx context.Context, fn func(ObjectInfo) error) error
	// DeleteObjects removes objects (garbage collection); missing ones are skipped.
	DeleteObjects(ctx context.Context, hs []Hash) error
	// Purge removes the content of an object and records why; the hash stays.
	// Purging a purged object is a no-op.
	Purge(ctx context.Context, p Purge) error
	// Purges lists the purge records.
	Purges(ctx context.Context) ([]Purge, error)

	// Ref returns one ref.
	Ref(ctx context.Context, name string) (Ref, error)
	// Refs returns the refs whose names start with prefix, sorted by name.
	Refs(ctx context.Context, prefix string) ([]Ref, error)
	// RefLog returns the log of updates to refs newer than since, newest
	// first; an empty name means every ref.
	RefLog(ctx context.Context, name string, since time.Time) ([]RefLogEntry, error)
	// Pins returns the pins that have not expired at now.
	Pins(ctx context.Context, now time.Time) ([]Pin, error)

	// Update runs fn in one write transaction. If fn returns an error,
	// nothing it did is kept.
	Update(ctx context.Context, fn func(Tx) error) error

	// Close releases the backend.
	Close() error
}

// CheckRefUpdate decides whether the compare-and-swap u may apply to a ref
// that is cur (exists is false when there is none), as every backend's
// Tx.UpdateRef does: a tag never moves, a ref's kind never changes, and
// the ref must be where u.Old expects it (ECONFLICT otherwise, with a
// hint); deleting a ref that does not exist is ENOTFOUND.
func CheckRefUpdate(cur Ref, exists bool, u RefUpdate) error {
	what := "branch"
	if u.Kind == RefTag {
		what = "tag"
	}
	short := u.Name[strings.IndexByte(u.Name, '/')+1:]
	switch {
	case exists && cur.Kind == RefTag:
		return Errorf(ECONFLICT, "tag %s exists and never moves", short).WithHint("Choose another tag name.")
	case exists && cur.Kind != u.Kind:
		return Errorf(ECONFLICT, "%s is not a %s", short, what)
	case !exists && !u.Old.IsZero():
		return Errorf(ECONFLICT, "%s %s does not exist (expected it at %s)", what, short, u.Old.Short()).
			WithHint("Try: cairn branch")
	case exists && u.Old.IsZero():
		return Errorf(ECONFLICT, "%s %s already exists (at %s)", what, short, cur.Hash.Short())
	case exists && cur.Hash != u.Old:
		return Errorf(ECONFLICT, "%s %s moved: expected %s, found %s", what, short, u.Old.Short(), cur.Hash.Short()).
			WithHint("Another change landed first; merge it and try again.")
	case u.New.IsZero() && !exists:
		return Errorf(ENOTFOUND, "%s %s does not exist", what, short)
	}
	return nil
}

// Tx is a write transaction of a Backend.
type Tx interface {
	// PutObjects stores objects as part of the transaction.
	PutObjects(ctx context.Context, objs []Object) error
	// Ref reads a ref inside the transaction.
	Ref(ctx context.Context, name string) (Ref, error)
	// UpdateRef applies one compare-and-swap and logs it. A tag that exists
	// cannot be moved or deleted (ECONFLICT).
	UpdateRef(ctx context.Context, u RefUpdate) error
	// SetPin adds or replaces the pin (p.Hash, p.Reason).
	SetPin(ctx context.Context, p Pin) error
	// DeletePin removes the pin (h, reason) if it exists.
	DeletePin(ctx context.Context, h Hash, reason string) error
}
