// Package cli is the agent runtimes "claude", "codex" and "opencode": Claude
// Code, Codex and OpenCode run as specialisations of the command runtime
// (package agent/command) — the same workspace, confinement, timeout,
// inactivity watchdog and cancellation of the whole process tree — each
// with its CLI's non-interactive argv, permissions that allow writing
// only in the workspace and no shell, network or git tools, a private
// config folder per job that shuts out the user's own settings, memory
// and MCP servers, and cairn's MCP tools over stdio on a view of the
// job's workspace. Each reads its CLI's event stream into activity,
// usage and the agent's summary, and turns a failure its CLI reports
// (max turns, budget, an error) into the job's failure.
//
// Before a job starts, the CLI is found (agent.command, else PATH and the
// usual install folders) and its version checked, and its credentials
// looked for: a missing CLI or key fails the job at once with a hint.
//
// The package registers the three runtimes with package agent when it is
// imported: import _ "cairn/agent/cli". docs/agents.md says, per CLI,
// what is isolated and what is not.
package cli
