// Package sample holds the bundled sample vault, sources and agent script
// that `cairn demo` uses.
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

// Agents are scripts that behave like agent CLIs, for the command runtime:
// delete-a-page.sh reads the prompt, writes a summary and deletes a page.
//
//go:embed agents
var Agents embed.FS
