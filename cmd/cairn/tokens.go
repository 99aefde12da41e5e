package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

func (a *cli) tokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make, list and revoke the tokens that let programs and people use a server",
		Long: `A token lets a client of cairn serve act on the vault: the HTTP API, MCP over
HTTP, the web UI, or the cairn command pointed at a server (--server URL with
$CAIRN_TOKEN). Each token acts as one principal (user:NAME or agent:NAME) and
holds scopes, which do not imply one another:

  read      everything that changes nothing
  propose   changes that go through admission: commits, changesets, merges,
            reverts, proposals, ingest, retrying and cancelling jobs
  review    accepting, rejecting and rechecking held proposals
  admin     settings, tokens, branches and tags, gc, purge, reindex

The secret is printed once, when the token is made; the vault keeps only its
hash. A token expires (default after 90 days) and can be revoked at once.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.tokenCreateCmd(), a.tokenListCmd(), a.tokenRevokeCmd())
	return cmd
}

func (a *cli) tokenCreateCmd() *cobra.Command {
	var req app.TokenRequest
	var scopes, principal string
	cmd := &cobra.Command{
		Use:   "create --name NAME --scope SCOPES",
		Short: "Make a token and print its secret (once)",
		Example: `  cairn token create --name laptop --scope read,propose,review
  cairn token create --name claude --principal agent:claude --scope read,propose --expires 30d
  cairn token create --name ci --scope read --expires never`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.Name == "" {
				return usage{msg: "token create needs --name", hint: "Name what the token is for: cairn token create --name laptop --scope read"}
			}
			sc, err := auth.ParseScopes(scopes)
			if err != nil {
				return err
			}
			req.Scopes = sc
			if principal != "" {
				p := cairn.Principal(principal)
				if !strings.Contains(principal, ":") {
					p = cairn.User(principal)
				}
				req.Principal = p
			}
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			nt, err := c.CreateToken(ctx, req)
			if err != nil {
				return err
			}
			t := nt.Token
			out := items([]map[string]any{{"id": t.ID, "token": t, "secret": nt.Secret}})
			return a.emit(out, func(w io.Writer) {
				fmt.Fprintf(w, "Made token %s (%s) for %s with scopes %s, %s.\n", t.ID, t.Name, t.Principal, scopeList(t.Scopes), expiry(t))
				fmt.Fprintf(w, "Secret (shown only now; keep it safe):\n\n  %s\n\n", nt.Secret)
				fmt.Fprintln(w, "Use it with a server: CAIRN_TOKEN=<secret> cairn --server URL ..., or Authorization: Bearer <secret>.")
			})
		},
	}
	cmd.Flags().StringVar(&req.Name, "name", "", "what the token is for (required)")
	cmd.Flags().StringVar(&scopes, "scope", "read", "what it may do: read, propose, review, admin (comma-separated)")
	cmd.Flags().StringVar(&principal, "principal", "", "who it acts as: user:NAME or agent:NAME (default: user:<name>)")
	cmd.Flags().StringVar(&req.Expires, "expires", app.DefaultTokenExpiry, "how long it lasts: 90d, 12h, 30m or never")
	return cmd
}

func scopeList(s []auth.Scope) string {
	names := make([]string, len(s))
	for i, sc := range s {
		names[i] = string(sc)
	}
	return strings.Join(names, ",")
}

func expiry(t *auth.Token) string {
	if t.Expires.IsZero() {
		return "never expires"
	}
	return "expires " + t.Expires.Local().Format(time.DateTime)
}

func (a *cli) tokenListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			ts, err := c.Tokens(a.ctx)
			if err != nil {
				return err
			}
			now := time.Now()
			type item struct {
				*auth.Token
				State string `json:"state"`
			}
			out := make([]item, 0, len(ts))
			for _, t := range ts {
				out = append(out, item{Token: t, State: t.State(now)})
			}
			return a.emit(items(out), func(w io.Writer) {
				if len(out) == 0 {
					fmt.Fprintln(w, "No tokens. Make one: cairn token create --name NAME --scope read")
				}
				for _, t := range out {
					fmt.Fprintf(w, "%s  %-8s %-16s %-24s %-26s %s\n", t.ID, t.State, t.Name, t.Principal, scopeList(t.Scopes), expiry(t.Token))
				}
			})
		},
	}
}

func (a *cli) tokenRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			t, err := c.RevokeToken(ctx, args[0])
			if err != nil {
				return err
			}
			return a.emit(items([]*auth.Token{t}), func(w io.Writer) {
				fmt.Fprintf(w, "Revoked token %s (%s, %s).\n", t.ID, t.Name, t.Principal)
			})
		},
	}
}
