// Package store is cairn's versioned, content-addressed store: blobs, a
// history-independent Merkle tree of the vault's files, commits, branches
// moved only by compare-and-swap, immutable tags, pinned reads, diffs,
// three-way merges, garbage collection, purge and verification.
//
// The store holds the logic; a [cairn.Backend] (sqlite, postgres) holds the
// bytes. Objects are named by the SHA-256 of a type prefix and a canonical
// encoding, specified in docs/format.md and held by golden vectors in this
// package's tests.
//
// # The tree
//
// The vault tree maps a path's case-folded key ([cairn.FoldPath]) to a file
// entry. It is a prolly tree whose nodes are cut by one scan of each level's
// sorted items: an item ends a node at level L when the boundary level of its
// key exceeds L, or when it brings the node to 256 KiB, so no choice of file
// names makes a node larger. The cuts depend only on the entries, so the same
// set of files gives the same root hash whatever the order of the edits that
// produced it; a one-file edit rewrites one node per level (O(log n) small
// nodes); a lookup reads one node per level; and a diff skips every subtree
// whose hash is equal on both sides, so it costs O(changes), not O(files).
// Keying by the folded path makes two paths that differ only in case
// impossible to store side by side.
//
// # Writing
//
// New objects collect in a [Batch] (in memory) and are written in the same
// database transaction as the commit and ref update that make them
// reachable, through [Store.Commit] or [Store.Update]. Large imports may
// [Batch.Flush] early; garbage collection spares unreachable objects younger
// than its grace period, so those are never collected under a running import.
package store
