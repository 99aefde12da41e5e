package app

// The agent runtimes cairn ships register themselves when imported. The
// application layer imports them, once, because it is what runs ingests
// for every surface (the CLI, and the HTTP API, MCP server and web UI to
// come): an App can run whatever agent.runtime a vault names among them.
// A new runtime is a package of its own, imported here.
import (
	_ "cairn/agent/builtin"
	_ "cairn/agent/cli"
	_ "cairn/agent/command"
	_ "cairn/agent/extractive"
)
