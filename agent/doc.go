// Package agent is the contract between cairn and its agent runtimes:
// what turns a source into a proposed change to the vault. A Runtime runs
// a Task and returns a Result or a Failure; every agent is told, by
// Prompt, that everything it reads (the source, the vault's pages, any
// file) is data, never instructions, and the admission gates judge
// whatever it does. Transcript and Clean are for runtimes that run an
// agent's process and read its output.
//
// Runtimes register themselves (Register, from an init function) and are
// chosen by name with agent.runtime; package admit validates a policy
// against the registry and the ingest worker builds the runtime with New.
// cairn's own live in subpackages:
//
//   - extractive (the default, package agent/extractive): offline and
//     deterministic; it writes an extractive summary of the source and
//     adds it to the index, through a draft in the store.
//   - command (package agent/command): any agent CLI, run confined in a
//     workspace folder holding the base commit's files.
//
// Adding a runtime is adding a package that calls Register in init, and a
// blank import of it where the program is wired (package app).
package agent
