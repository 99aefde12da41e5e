package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/auth"
	"cairn/httpapi"
	"cairn/mcpserver"
	"cairn/vault"
	"cairn/webui"
)

// serveFlags are the flags of cairn serve.
type serveFlags struct {
	addr, cert, key, maxBody string
	hosts                    []string
	workers                  int
	insecure                 bool
}

func (a *cli) serveCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7420]",
		Short: "Serve the vault: the HTTP API, the job worker and the event stream",
		Long: `Serve runs the vault as a service: the HTTP API under /api/v1 (its OpenAPI
document at /openapi.json), the MCP server at /mcp (streamable HTTP), the
job worker (what cairn worker does, the folders' watcher included), and
the live event stream at /api/v1/events. /healthz and /readyz answer
without a token.

Every request needs a bearer token with the scope its route names (cairn
token create); loopback too. While the server runs, cairn commands run in
the vault's folder go through it: it writes the file .cairn/server.json
(readable only by you) with its address and a token for you, made when it
starts and revoked when it stops, and they reach it over the socket
.cairn/server.sock, which only your own processes are trusted on. Other
clients use --server URL and $CAIRN_TOKEN.

It listens on loopback unless told otherwise. An address that is not
loopback needs TLS (--tls-cert and --tls-key), or --insecure when a proxy
on the machine adds it. --host names each host name clients reach it by
(others are refused, against DNS rebinding; IP addresses always answer).

Ctrl-C or SIGTERM stops it gracefully: requests in flight finish, running
jobs go back to the queue to resume, and it exits 0.`,
		Example: `  cairn serve
  cairn serve --addr 0.0.0.0:7420 --tls-cert cert.pem --tls-key key.pem --host kb.example.org
  cairn serve --addr 127.0.0.1:0          (any free port: .cairn/server.json says which)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.serve(&f) },
	}
	cmd.Flags().StringVar(&f.addr, "addr", "127.0.0.1:7420", "the address to listen on, HOST:PORT")
	cmd.Flags().StringVar(&f.cert, "tls-cert", "", "serve TLS with this certificate (PEM)")
	cmd.Flags().StringVar(&f.key, "tls-key", "", "the certificate's private key (PEM)")
	cmd.Flags().BoolVar(&f.insecure, "insecure", false, "listen on an address that is not loopback without TLS")
	cmd.Flags().StringSliceVar(&f.hosts, "host", nil, "a host name clients reach the server by (repeat, or comma-separated)")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "jobs run at once (default: the vault's setting agent.workers)")
	cmd.Flags().StringVar(&f.maxBody, "max-body", "64MiB", "the largest request body (a changeset, uploaded sources)")
	return cmd
}

// check reports what is wrong with the flags, before anything is opened.
func (f *serveFlags) check() (maxBody int64, err error) {
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return 0, usage{msg: fmt.Sprintf("--addr %q is not HOST:PORT", f.addr), hint: "Try: --addr 127.0.0.1:7420"}
	}
	if (f.cert == "") != (f.key == "") {
		return 0, usage{msg: "TLS needs both --tls-cert and --tls-key", hint: "Give the certificate and its private key, as PEM files."}
	}
	if !loopback(host) && f.cert == "" && !f.insecure {
		return 0, usage{msg: fmt.Sprintf("%s is not a loopback address, and without TLS the tokens and the vault's pages would cross the network in the clear", f.addr),
			hint: "Give --tls-cert and --tls-key; or --insecure when a proxy on this machine adds TLS."}
	}
	if f.workers < 0 || f.workers > 64 {
		return 0, usage{msg: fmt.Sprintf("--workers %d: give 0 (the vault's setting) to 64", f.workers)}
	}
	n, err := humanize.ParseBytes(f.maxBody)
	if err != nil || n < 1<<20 || n > 1<<32 {
		return 0, usage{msg: fmt.Sprintf("--max-body %q: give a size from 1MiB to 4GiB", f.maxBody), hint: "Try: --max-body 64MiB"}
	}
	return int64(n), nil
}

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (a *cli) serve(f *serveFlags) error {
	maxBody, err := f.check()
	if err != nil {
		return err
	}
	var tlsConfig *tls.Config
	if f.cert != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return cairn.Errorf(cairn.EINVALID, "load the TLS certificate: %v", err).
				WithHint("--tls-cert and --tls-key name PEM files of a certificate and its key.")
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	p, err := a.principal()
	if err != nil {
		return err
	}
	if err := a.noOtherServer(); err != nil {
		return err
	}
	if a.serverURL() != "" {
		return usage{msg: "cairn serve serves a vault of this machine; it does not go through a server", hint: "Run it without --server and $CAIRN_SERVER."}
	}
	a.serving()
	opts := a.appOptions()
	opts.Workers = f.workers
	opts.Unmapped = true
	c, err := app.Open(a.ctx, a.dir(), opts)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, r := range c.Repaired() {
		fmt.Fprintf(a.stderr, "cairn: %s\n", r)
	}
	for _, pr := range c.Problems() {
		fmt.Fprintf(a.stderr, "cairn: warning: %s\n", pr)
	}
	ctx := cairn.NewContextWithPrincipal(a.ctx, p)

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return cairn.Errorf(cairn.EUNAVAILABLE, "listen on %s: %w", f.addr, err).
			WithHint("Another program may use the port: give another with --addr, or --addr 127.0.0.1:0 for any free one.")
	}
	scheme := "http"
	if tlsConfig != nil {
		ln, scheme = tls.NewListener(ln, tlsConfig), "https"
	}
	defer ln.Close()
	url := scheme + "://" + ln.Addr().String()
	// The commands of the vault's folder come through its socket, where
	// none needs to ask for the key's proof: none, and they go to url,
	// where the socket cannot be made. A socket another server still
	// listens on is left to it (noOtherServer found none of this vault's:
	// it is one of the folder this vault was moved from, or one that
	// started at the same moment), and so is a file that is no socket.
	var local []net.Listener
	switch sock, err := httpapi.ListenLocal(c.Root()); {
	case err != nil:
		a.logger().Warn("commands of the vault's folder go through "+url, "err", err, "hint", cairn.ErrorHint(err))
	case sock != nil:
		defer sock.Close()
		local = append(local, sock)
	}

	// The owner's token: commands in the vault's folder use it, for as
	// long as the server runs. Those a server of this machine left when
	// it died are revoked first.
	host := ownerHost()
	revokeOrphans(ctx, c, host, a.logger())
	owner, err := c.CreateToken(ctx, app.TokenRequest{Name: fmt.Sprintf("serve-%d@%s", os.Getpid(), host), Principal: p, Scopes: auth.AllScopes(), Expires: "never"})
	if err != nil {
		return err
	}
	// A sign-in link for the owner, who started the server: one use, and
	// none once the server stops.
	link, err := c.SignInLink(ctx, auth.AllScopes())
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := c.RevokeToken(rctx, link.Token.ID); err != nil {
			a.logger().Warn("revoke the sign-in link", "token", link.Token.ID, "err", err)
		}
	}()
	key, err := httpapi.NewProofKey()
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := c.RevokeToken(rctx, owner.Token.ID); err != nil {
			a.logger().Warn("revoke the owner's token", "token", owner.Token.ID, "err", err)
		}
	}()
	w, err := c.StartWorker(a.ctx)
	if err != nil {
		return err
	}
	defer func() {
		// Running jobs are cut short and go back to the queue, to resume.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 10*time.Second)
		defer cancel()
		if err := w.Stop(sctx); err != nil {
			a.logger().Warn("stop the worker", "err", err)
		}
	}()
	sf := &httpapi.ServerFile{URL: url, Token: owner.Secret, TokenID: owner.Token.ID, Key: key, Root: c.Root(), PID: os.Getpid(), Started: time.Now()}
	if f.cert != "" {
		sf.Cert, _ = filepath.Abs(f.cert)
	}
	if len(local) > 0 {
		sf.Socket = local[0].Addr().String()
	}
	if err := httpapi.WriteServerFile(c.Root(), sf); err != nil {
		return err
	}
	defer httpapi.RemoveServerFile(c.Root(), owner.Token.ID)

	s := httpapi.New(c, &httpapi.Options{Logger: a.logger(), Version: version(), Hosts: f.hosts, MaxBody: maxBody, ProofKey: key})
	ms := mcpserver.New(c, &mcpserver.Options{Version: version(), Logger: a.logger(), Extend: a.mcpExtend})
	s.Mount(mcpserver.Path, auth.Read, "mcp", mcpserver.Challenge, ms.Handler(mcpserver.FromToken, mcpMaxBody))
	s.MountPublic("GET "+mcpserver.MetadataPath, mcpserver.Metadata())
	s.MountPublic("GET "+mcpserver.MetadataPath+mcpserver.Path, mcpserver.Metadata())
	ui, err := webui.New(c, &webui.Options{Logger: a.logger(), Version: version(), Limit: s.Limit, Done: s.Stopping()})
	if err != nil {
		return err
	}
	s.Fallback(ui)
	a.emit(items([]map[string]any{{"id": url, "url": url, "root": c.Root(), "pid": os.Getpid(), "worker": w.ID(), "sign_in": url + "/signin?link=" + link.Secret}}), func(wr io.Writer) {
		fmt.Fprintf(wr, "Serving the vault at %s on %s (Ctrl-C stops).\n", c.Root(), url)
		fmt.Fprintln(wr, "Commands in its folder go through it; other clients need a token: cairn token create --name NAME --scope read")
		fmt.Fprintf(wr, "In a browser: %s/signin?link=%s (works once, for %s), or sign in with a token.\n", url, link.Secret, app.LinkLife)
	})
	err = s.Serve(a.ctx, ln, local...)
	if !a.json {
		fmt.Fprintln(a.stdout, "Stopped: requests finished; running jobs go back to the queue.")
	}
	return err
}

// noOtherServer refuses to start a second server on a vault whose server
// answers.
func (a *cli) noOtherServer() error {
	loc, err := vault.Locate(a.dir())
	if err != nil {
		return nil // opening the vault says what is wrong
	}
	f, err := httpapi.ReadServerFile(loc.Vault)
	if err != nil {
		return nil
	}
	c, proven, err := f.Client()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, 3*time.Second)
	defer cancel()
	if !proven {
		if err := c.Verify(ctx, f.Key); err != nil {
			return nil // a server that died: what answers there, if anything, gets no token
		}
	}
	if info, err := c.Vault(ctx); err != nil || !vault.SameFolder(info.Root, loc.Vault) {
		return nil // one of the folder this was copied from
	}
	return cairn.Errorf(cairn.ECONFLICT, "a server already serves this vault at %s (process %d)", f.URL, f.PID).
		WithHint("Commands in the vault's folder go through it. Stop it first to start another.")
}

// version is cairn's version as the build recorded it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// ownerHost names this machine in the owners' tokens (letters, digits, .
// and -, at most 40).
func ownerHost() string {
	h, _ := os.Hostname()
	var b strings.Builder
	for _, r := range h {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			b.WriteRune(r)
		}
	}
	name := cmpOr(b.String(), "localhost")
	return name[:min(40, len(name))]
}

// revokeOrphans revokes the owners' tokens of servers of this machine that
// are gone (killed before they could revoke their own): a server file they
// left behind, or a copy of it, names no live token.
func revokeOrphans(ctx context.Context, c *app.App, host string, log *slog.Logger) {
	ts, err := c.Tokens(ctx)
	if err != nil {
		return
	}
	for _, t := range ts {
		rest, ok := strings.CutPrefix(t.Name, "serve-")
		pidText, h, ok2 := strings.Cut(rest, "@")
		pid, err := strconv.Atoi(pidText)
		if !ok || !ok2 || err != nil || h != host || !t.Revoked.IsZero() || alive(pid) {
			continue
		}
		if _, err := c.RevokeToken(ctx, t.ID); err != nil {
			log.Warn("revoke the token of a server that died", "token", t.ID, "err", err)
		}
	}
}

// alive reports whether process pid runs on this machine.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// mcpMaxBody bounds the body of one MCP request: a page written whole,
// or a few with propose.
const mcpMaxBody = 8 << 20

// serving sets the garbage collector of a process that stays up answering
// calls (cairn serve, cairn mcp), unless $GOGC or $GOMEMLIMIT says
// otherwise: a collection when the heap has grown fivefold rather than
// twofold, up to a soft bound of 160 MiB. Decoding a call's JSON allocates
// some 300 KB in the MCP SDK, 70% of what a server allocates, and with
// the default a collection ran every few dozen calls and took a third of
// the server's CPU; the heap a server keeps is 20-50 MB.
func (a *cli) serving() {
	a.gc.set(400)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(160 << 20)
	}
}
