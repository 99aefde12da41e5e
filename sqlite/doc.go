// Package sqlite is cairn's embedded backend: the whole vault in one SQLite
// file (modernc.org/sqlite, pure Go, no cgo).
//
// The file runs in WAL mode with synchronous=FULL by default, so a commit
// that returned is on disk. Each process has one writer connection, whose
// transactions begin IMMEDIATE and wait up to the busy timeout for the write
// lock, and a separate pool of read-only connections, so reads never queue
// behind writes and several cairn processes on one machine take turns.
// Schema changes are embedded, numbered migrations applied at open.
package sqlite
