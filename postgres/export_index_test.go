package postgres

import "cairn/index"

// SetLeastShortPages makes the fewest pages the shortest pages' tier of
// s holds least (1,000 by default), so that a test's small vault has
// tiers of a large one's proportions.
func SetLeastShortPages(s index.Storage, least int) {
	s.(*IndexStorage).sizes.least = least
}

// BuiltTables are the tables a vault's first build locks.
func BuiltTables() []string { return builtTables() }
