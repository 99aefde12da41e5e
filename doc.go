// Package cairn holds the domain of a cairn vault: the types every subsystem
// shares (hashes, principals, commits, tree entries, changes, conflicts), the
// closed set of error codes, and the interfaces that have several real
// implementations, above all [Backend], the storage under the versioned store.
//
// The package imports nothing from the rest of the module. Subsystems live in
// their own packages (store, sqlite, markdown, merge, ...) and are wired
// together only in cmd/cairn.
package cairn
