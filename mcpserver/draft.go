package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cairn"
	"cairn/agent"
	"cairn/app"
	"cairn/auth"
	"cairn/llm"
	"cairn/store"
)

// AgentDrafts returns what opens cairn's MCP tools on a new draft, in
// process, for the built-in agent of an ingest job (app.Options.Drafts):
// an MCP client session over an in-memory transport to a server on the
// draft, so that the agent calls the same tools, through the same
// protocol, as any MCP client. It acts as agent:llm, with the scopes read
// and propose (read only, to answer a question); its writes go into the
// draft (Options.Draft).
func AgentDrafts(version string, logger *slog.Logger) func(*app.App) agent.DraftTools {
	return func(a *app.App) agent.DraftTools {
		return func(ctx context.Context, base cairn.Hash, opts agent.ToolsOptions) (agent.Toolbox, error) {
			d, err := a.NewDraft(ctx, base)
			if err != nil {
				return nil, err
			}
			s := New(a, &Options{Draft: d, Scope: opts.Scope, Version: version, Logger: logger})
			ct, st := mcp.NewInMemoryTransports()
			// The session lives until Close, not as long as ctx.
			sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			scopes := []auth.Scope{auth.Read, auth.Propose}
			if opts.ReadOnly {
				scopes = scopes[:1]
			}
			ss, err := s.MCP(Stdio(cairn.Agent("llm"), scopes)).Connect(sctx, st, nil)
			if err != nil {
				cancel()
				return nil, fmt.Errorf("serve the agent's tools: %w", err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "cairn-llm", Version: version}, nil).Connect(sctx, ct, nil)
			if err != nil {
				ss.Close()
				cancel()
				return nil, fmt.Errorf("reach the agent's tools: %w", err)
			}
			return &draftBox{draft: d, cs: cs, ss: ss, cancel: cancel}, nil
		}
	}
}

// draftBox is an agent.Toolbox: an MCP client session to a server on a
// draft.
type draftBox struct {
	draft  *app.Draft
	cs     *mcp.ClientSession
	ss     *mcp.ServerSession
	cancel context.CancelFunc
}

func (b *draftBox) Tools(ctx context.Context) ([]llm.Tool, error) {
	var out []llm.Tool
	for t, err := range b.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		out = append(out, llm.Tool{Name: t.Name, Description: t.Description, Schema: schema})
	}
	return out, nil
}

func (b *draftBox) Call(ctx context.Context, name string, args json.RawMessage) (string, bool, error) {
	res, err := b.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		// An unknown tool or bad arguments is the model's mistake, for it
		// to read; a broken session is not.
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return err.Error(), true, nil
		}
		return "", false, err
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError, nil
}

func (b *draftBox) Tree(ctx context.Context, batch *store.Batch) (cairn.Hash, bool, error) {
	tree, err := b.draft.Tree(ctx, batch)
	return tree, len(b.draft.Changed()) > 0, err
}

func (b *draftBox) Close() error {
	err := b.cs.Close()
	b.ss.Close()
	b.cancel()
	return err
}
