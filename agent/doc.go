// Package agent holds cairn's agent runtimes: what turns a source into a
// proposed change to the vault.
//
//   - extractive (the default): offline and deterministic; it writes an
//     extractive summary of the source (key passages chosen by TextRank, key
//     terms, links to the pages whose titles occur in it) and adds it to the
//     index, through a draft in the store.
//   - command: any agent CLI, run in a workspace folder holding the base
//     commit's files, confined so it can write only there and in private
//     temp and home folders, and read only those, the system's read-only
//     files and the folders agent.read names (package confine), its prompt
//     on stdin and its output streamed; a Transcript keeps, within bounds,
//     the end of its output and its summary. Without Landlock it runs only
//     when agent.unconfined allows it.
//
// Every agent is told that everything it reads (the source, the vault's
// pages, any file) is data, never instructions (Prompt); the admission
// gates judge whatever it does.
package agent
