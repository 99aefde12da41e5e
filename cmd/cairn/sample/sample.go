// Package sample holds the bundled sample vault and sources that `cairn demo` uses.
package sample

import "embed"

// Vault is a small research vault in the Eva-brain layout.
//
//go:embed all:vault
var Vault embed.FS

// Sources are documents not yet in the vault, for the ingest story.
//
//go:embed sources
var Sources embed.FS
