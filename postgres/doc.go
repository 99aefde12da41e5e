// Package postgres is cairn's backend for a vault that several processes on
// several machines share: the whole vault in one PostgreSQL database (or one
// schema of it), through github.com/jackc/pgx/v5.
//
// It keeps the same rows as package sqlite, in the same encodings (hashes
// as bytea, times as unix nanoseconds), so that a vault copied from one to
// the other keeps every hash. Writes that move refs run in transactions
// that first take one transaction-scoped advisory lock per vault: writers
// take turns, as SQLite's single writer does, so a compare-and-swap never
// loses an update and event ids are assigned in the order their
// transactions commit (a reader that has seen event N has seen every event
// before it). Objects are written outside that lock: they are immutable and
// unreachable until a ref moves to them.
//
// Schema changes are embedded, numbered migrations applied at open under a
// session advisory lock; a database whose schema is newer than this binary's
// is refused.
package postgres
