package main

import (
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"cairn"
	agentcmd "cairn/agent/command"
	"cairn/app"
	"cairn/auth"
	"cairn/mcpserver"
)

// mcpFlags are the flags of cairn mcp.
type mcpFlags struct {
	view   string
	scopes string
	relay  string
}

func (a *cli) mcpCmd() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [-C VAULT] [--view REF] [--scope read,propose]",
		Short: "Serve the vault to an agent over MCP on standard input and output",
		Long: `Mcp serves the vault's MCP tools, resources and prompts to one client over
standard input and output: the command a local agent's MCP configuration
starts, as in

  {"command": "cairn", "args": ["mcp", "-C", "/path/to/vault"]}

The client acts as agent:<its name> (from its initialize request), or as
--as says. It may read (scope read) and propose changes (scope propose):
every change goes through admission like any other, so an agent cannot
accept its own held changes unless --scope also gives it review.

The read tools read main as it is at each call, or, with --view, a branch,
a tag, a proposal's branch (proposals/4) or a commit. docs/mcp.md lists the
tools. cairn serve serves the same tools over HTTP at /mcp.`,
		Example: `  cairn mcp -C ~/brain
  cairn mcp -C ~/brain --view proposals/4 --scope read
  cairn mcp -C ~/brain --as agent:librarian --scope read,propose,review`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.mcp(&f) },
	}
	cmd.Flags().StringVar(&f.view, "view", "", "what the read tools read: a branch, tag, proposals/N or commit (default: main, live)")
	cmd.Flags().StringVar(&f.scopes, "scope", "read,propose", "what the client may do: read, propose, review, admin (comma-separated)")
	cmd.Flags().StringVar(&f.relay, "relay", "", "relay standard input and output to the tool server of an ingest job's agent at this address (what agent CLIs start; the token is in $"+agentcmd.RelayTokenEnv+")")
	cmd.Flags().MarkHidden("relay")
	return cmd
}

func (a *cli) mcp(f *mcpFlags) error {
	if f.relay != "" {
		token := os.Getenv(agentcmd.RelayTokenEnv)
		if token == "" {
			return usage{msg: "cairn mcp --relay needs the job's token in $" + agentcmd.RelayTokenEnv,
				hint: "It is what an ingest job's agent CLI starts; the job's MCP config gives the token."}
		}
		return agentcmd.Relay(a.ctx, f.relay, token, a.stdin, a.stdout)
	}
	scopes, err := auth.ParseScopes(f.scopes)
	if err != nil {
		return usage{msg: err.Error(), hint: "Try: --scope read,propose"}
	}
	var as cairn.Principal
	if a.as != "" {
		if as, err = a.principal(); err != nil {
			return err
		}
	}
	if a.serverURL() != "" {
		return usage{msg: "cairn mcp serves a vault of this machine; a server serves MCP itself at /mcp",
			hint: "Point the MCP client at the server's URL + /mcp with a token, or run cairn mcp without --server."}
	}
	// A long-lived reader that, unlike a server, sees few commits (its
	// agent's writes, a worker's): its readers map the database, as a
	// command's do. A commit makes a reader drop what it holds either
	// way; between commits a mapped page costs no system call (a third of
	// the time of a read of an object at 100k pages).
	a.serving()
	c, err := app.Open(a.ctx, a.dir(), a.appOptions())
	if err != nil {
		return err
	}
	defer c.Close()
	a.printRepairs(c.Repaired(), c.Problems())
	view := c.View(f.view)
	if f.view != "" {
		if _, err := c.ResolveCommit(a.ctx, f.view); err != nil {
			return err
		}
	}
	s := mcpserver.New(c, &mcpserver.Options{View: view, Version: version(), Logger: a.logger(), Extend: a.mcpExtend})
	t := &mcp.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopWriteCloser{a.stdout}}
	err = s.Run(a.ctx, t, mcpserver.Stdio(as, scopes))
	if err != nil && (a.ctx.Err() != nil || strings.Contains(err.Error(), "EOF")) {
		return nil // the client went, or we were told to stop
	}
	return err
}

// nopWriteCloser is a Writer whose Close does nothing: standard output
// stays open for what the command prints after.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
