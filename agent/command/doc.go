// Package command is the agent runtime "command": any agent CLI (agent.command),
// run in a workspace folder holding the base commit's files, confined so it
// can write only there and in private temp and home folders, and read only
// those, the system's read-only files and the folders agent.read names
// (package confine), its prompt on stdin and its output streamed; an
// agent.Transcript keeps, within bounds, the end of its output and its
// summary. Without Landlock it runs only when agent.unconfined allows it.
//
// The package registers the runtime with package agent when it is
// imported: import _ "cairn/agent/command".
package command
