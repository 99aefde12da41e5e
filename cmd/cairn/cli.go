package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"cairn"
	"cairn/app"
	"cairn/httpapi"
	"cairn/mcpserver"
	"cairn/vault"
)

// Exit codes.
const (
	exitOK      = 0 // success
	exitRefused = 1 // the operation was refused: a conflict, held findings, a busy vault
	exitUsage   = 2 // bad usage or input
	exitBug     = 3 // an internal error: a bug, or a damaged database
)

// cli is one run of the command line.
type cli struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	json           bool
	vaultDir       string
	database       string
	as             string
	// code is set by commands that succeed in running but refuse (exit 1
	// without an error message of their own).
	code int
	// quiet keeps open from printing what it repaired, for a command that
	// reports it itself.
	quiet bool
	// logLevel and logFormat are the --log-level and --log-format flags;
	// log is the logger they make, once the flags are parsed.
	logLevel, logFormat string
	log                 *slog.Logger
	// server is --server: the URL of a server to use instead of the
	// vault's folder.
	server string
	// mustServe makes a command that can go through a server fail when
	// it would open the vault here (the transcripts' run through a
	// server).
	mustServe bool
	// mcpExtend is given to the MCP servers of cairn mcp and cairn serve
	// (mcpserver.Options.Extend): the conformance test's fixtures, set
	// only by the test binary.
	mcpExtend func(*mcp.ServerOptions) func(*mcp.Server)
	// bulk is set by a command that writes the whole vault once (adopting
	// a folder, an import): the vault it opens here does not map its
	// database and keeps small caches (app.Options.Bulk).
	bulk bool
	// gc is the process's garbage collector setting (nil when a test
	// runs Main): a command that needs its own sets it there.
	gc *collector
}

// Main runs the command line with args and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&cli{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}).run(args)
}

// mainProcess is Main as the process's own command line, with its garbage
// collector's setting.
func mainProcess(ctx context.Context, gc *collector, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&cli{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, gc: gc}).run(args)
}

// run runs the command line with args and returns the exit code.
func (a *cli) run(args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(a.ctx)
	if err == nil {
		return a.code
	}
	return a.fail(err)
}

func (a *cli) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "A knowledge base that agents maintain and people can trust",
		Long: `cairn keeps a vault: a folder of Markdown pages and sources (it opens in
Obsidian) with a database of its whole history in .cairn/. Sources go in and
an agent integrates them; every change to main (an agent's, a person's, a
merge) goes through admission, which admits it, holds it for a person's
review, or rejects it. Every change is a commit; branches merge structurally;
links, search and lint stay indexed.

Exit codes: 0 success; 1 the operation was refused (held for review or
rejected, a conflict, findings with --strict, a vault busy with another
process); 2 usage or input error; 3 an internal error (a bug, or a damaged
database: cairn doctor checks the vault).

What goes wrong beside a command's work (a folder sync that must wait, a job
retried or rescued) is logged on standard error: warnings and errors, and for
cairn worker also what it does (--log-level info).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		Example: `  cairn demo                 the ingest story, narrated, in a temporary vault
  cairn init my-vault        make a vault (adopts Markdown already there)
  cairn ingest paper.md      add a source; the vault's agent integrates it
  cairn review list          changes held for your decision
  cairn status               what you changed
  cairn commit -m "why"      record it`,
	}
	root.CompletionOptions.HiddenDefaultCmd = true
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print JSON: an object whose \"items\" list holds things that each have an \"id\"")
	root.PersistentFlags().StringVarP(&a.vaultDir, "vault", "C", "", "the vault to use (default: the one the current folder is in, or $CAIRN_VAULT)")
	root.PersistentFlags().StringVar(&a.database, "database", "", "the PostgreSQL database holding the vault, postgres://USER@HOST:PORT/DATABASE (default: $CAIRN_DATABASE, else what the vault's folder names)")
	root.PersistentFlags().StringVar(&a.as, "as", "", "who acts, as user:<name> (default: $CAIRN_USER, else your login name; through a server, its token's principal)")
	root.PersistentFlags().StringVar(&a.server, "server", "", "use the cairn serve at this URL, with the token $CAIRN_TOKEN (default: $CAIRN_SERVER, else the server running on the vault, else the vault itself)")
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "", "what is logged on standard error: debug, info, warn or error (default: info for cairn worker, warn otherwise)")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "", "how logs are written: text or json (default: json with --json, text otherwise)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return a.setupLog(cmd)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError("%s", err)
	})
	defer strictUsage(root)
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Explain a command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 && cmd == c.Root() {
				return usage{msg: fmt.Sprintf("%q is not a command of cairn", strings.Join(args, " ")), hint: "Run cairn --help to see the commands."}
			}
			return cmd.Help()
		},
	})
	root.AddCommand(
		a.initCmd(), a.statusCmd(), a.commitCmd(), a.logCmd(), a.showCmd(), a.lsCmd(), a.diffCmd(),
		a.branchCmd(), a.tagCmd(), a.mergeCmd(), a.revertCmd(),
		a.searchCmd(), a.askCmd(), a.healthCmd(), a.linksCmd(), a.backlinksCmd(), a.lintCmd(), a.typesCmd(), a.listCmd(), a.toolCmd(),
		a.reindexCmd(), a.doctorCmd(), a.gcCmd(), a.purgeCmd(), a.copyCmd(),
		a.importCmd(), a.exportCmd(), a.worktreeCmd(), a.demoCmd(),
		a.ingestCmd(), a.workerCmd(), a.sourcesCmd(), a.jobsCmd(), a.reviewCmd(), a.settingsCmd(), a.tokenCmd(), a.serveCmd(), a.mcpCmd(),
	)
	return root
}

// usage is an error in how cairn was called (exit 2).
type usage struct{ msg, hint string }

func (u usage) Error() string { return u.msg }

func usageError(format string, args ...any) error { return usage{msg: fmt.Sprintf(format, args...)} }

// strictUsage makes every way of calling a command wrongly a usage error
// (exit 2) that names the command's usage: a wrong number of arguments, and
// a subcommand that does not exist. Cobra reports both as plain errors.
func strictUsage(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		strictUsage(c)
	}
	help := "Run " + cmd.CommandPath() + " --help to see how it is used."
	if cmd.HasSubCommands() {
		if !cmd.Runnable() {
			cmd.RunE = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return c.Help()
				}
				return nil
			}
		}
		check := cmd.Args
		cmd.Args = func(c *cobra.Command, args []string) error {
			if len(args) > 0 && c.Commands() != nil && (check == nil || check(c, args) != nil) {
				msg := fmt.Sprintf("%q is not a command of %s", args[0], c.CommandPath())
				c.SuggestionsMinimumDistance = cmp.Or(c.SuggestionsMinimumDistance, 2)
				if s := c.SuggestionsFor(args[0]); len(s) > 0 {
					msg += "; did you mean " + strings.Join(s, " or ") + "?"
				}
				return usage{msg: msg, hint: "Run " + c.CommandPath() + " --help to see its commands."}
			}
			return nil
		}
		return
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				name := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
				return usage{msg: fmt.Sprintf("%s: %v (usage: %s)", name, err, c.UseLine()), hint: help}
			}
			return nil
		}
	}
}

// fail prints an error and its hint and returns the exit code for it.
func (a *cli) fail(err error) int {
	code := exitRefused
	var u usage
	switch {
	case errors.As(err, &u):
		code = exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, "cairn: interrupted")
		return exitRefused
	default:
		code = exitCode(err)
	}
	if a.json {
		kind := cairn.ErrorCode(err)
		if errors.As(err, &u) {
			kind = "usage"
		}
		out := map[string]any{"error": map[string]string{"code": kind, "message": err.Error(), "hint": hint(err)}}
		enc := json.NewEncoder(a.stderr)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return code
	}
	fmt.Fprintf(a.stderr, "cairn: %v\n", err)
	if h := hint(err); h != "" {
		fmt.Fprintf(a.stderr, "Hint: %s\n", h)
	}
	return code
}

// exitCode maps an error's code to the exit code: 2 for what the caller
// must change (bad input, a thing that does not exist, a file that cannot
// be read), 3 for an internal error (a bug or a damaged database), 1 for
// the rest (a conflict, a busy vault: the operation was refused).
func exitCode(err error) int {
	switch cairn.ErrorCode(err) {
	case cairn.EINVALID, cairn.ENOTFOUND, cairn.EUNAUTHORIZED, cairn.EFORBIDDEN:
		return exitUsage
	case cairn.EINTERNAL:
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrExist):
			return exitUsage // a path the caller named, or its permissions
		case errors.As(err, &pe), errors.Is(err, context.DeadlineExceeded):
			return exitRefused // the machine refused (a full disk, a read-only folder)
		}
		return exitBug
	}
	return exitRefused
}

// hint returns the hint for an error: its own, or for a usage error
// without one, where the commands are explained; for an internal error
// without one, what to do about it.
func hint(err error) string {
	var u usage
	if errors.As(err, &u) {
		return cmpOr(u.hint, "cairn --help lists the commands; cairn COMMAND --help explains one.")
	}
	if h := cairn.ErrorHint(err); h != "" {
		return h
	}
	if exitCode(err) == exitBug {
		return "This is a bug in cairn or a damaged vault: cairn doctor checks the vault; please report the error with what you ran."
	}
	return ""
}

// setupLog makes the logger of the run from --log-level and --log-format:
// on standard error, as text or JSON. The worker logs what it does (info);
// other commands only what goes wrong beside their work (warn).
func (a *cli) setupLog(cmd *cobra.Command) error {
	level := slog.LevelWarn
	if cmd.Name() == "worker" {
		level = slog.LevelInfo
	}
	if a.logLevel != "" {
		if err := level.UnmarshalText([]byte(a.logLevel)); err != nil || strings.ContainsAny(a.logLevel, "+-") {
			return usage{msg: fmt.Sprintf("--log-level %q is not a level", a.logLevel), hint: "Use debug, info, warn or error."}
		}
	}
	format := a.logFormat
	if format == "" {
		format = "text"
		if a.json {
			format = "json"
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "text":
		a.log = slog.New(slog.NewTextHandler(a.stderr, opts))
	case "json":
		a.log = slog.New(slog.NewJSONHandler(a.stderr, opts))
	default:
		return usage{msg: fmt.Sprintf("--log-format %q is not a format", a.logFormat), hint: "Use text or json."}
	}
	return nil
}

// logger returns the run's logger (warnings as text, before the flags are
// parsed).
func (a *cli) logger() *slog.Logger {
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return a.log
}

// cmpSlice returns xs, or an empty slice for nil (JSON [] rather than null).
func cmpSlice[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// emit prints v as JSON (with --json) or calls text to print it for people.
func (a *cli) emit(v any, text func(w io.Writer)) error {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	// Buffered: a line a write is a system call a line, and a status of
	// many changes prints many lines.
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	text(w)
	return w.Flush()
}

// list is the one JSON shape: a list of items that each have an id, and
// fields about the whole.
type list map[string]any

func items[T any](xs []T) list { return list{"items": cmpSlice(xs)} }

// principal returns who acts: --as, $CAIRN_USER, or the login name.
func (a *cli) principal() (cairn.Principal, error) {
	if a.as != "" {
		p := cairn.Principal(a.as)
		if !strings.Contains(a.as, ":") {
			p = cairn.User(a.as)
		}
		return cairn.ParsePrincipal(string(p))
	}
	name := os.Getenv("CAIRN_USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@+-", r) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		b.WriteString("someone")
	}
	return cairn.ParsePrincipal("user:" + b.String())
}

// dir is the folder the command works in: --vault, $CAIRN_VAULT, or the
// current folder.
func (a *cli) dir() string {
	return cmpOr(cmpOr(a.vaultDir, os.Getenv("CAIRN_VAULT")), ".")
}

// serverURL is the server the command was told to use: --server, else
// $CAIRN_SERVER.
func (a *cli) serverURL() string { return cmpOr(a.server, os.Getenv("CAIRN_SERVER")) }

// service returns the vault the command works on, through the application
// layer: a client of the server --server (or $CAIRN_SERVER) names, else of
// the server running on the vault the folder is in (its .cairn/server.json),
// else the vault opened here. A client works in the folder's working tree
// when its server serves the folder's vault.
func (a *cli) service() (app.Service, error) {
	if u := a.serverURL(); u != "" {
		token := os.Getenv("CAIRN_TOKEN")
		if token == "" {
			return nil, usage{msg: "a server needs a token: set $CAIRN_TOKEN to a token's secret",
				hint: "The server's owner makes one: cairn token create --name NAME --scope read,propose"}
		}
		c, err := httpapi.NewClient(u, token)
		if err != nil {
			return nil, err
		}
		info, err := c.Vault(a.ctx)
		if err != nil {
			return nil, err
		}
		var repaired []string
		if loc, err := vault.Locate(a.dir()); err == nil && vault.SameFolder(loc.Vault, info.Root) {
			// Working in the folder's tree needs admin (its local edits
			// are its owner's); without it, the command works in none.
			repaired, err = c.UseTree(a.ctx, loc.Tree)
			if code := cairn.ErrorCode(err); err != nil && code != cairn.ENOTFOUND && code != cairn.EFORBIDDEN {
				return nil, err
			}
		}
		a.printRepairs(append(info.Repaired, repaired...), info.Problems)
		return c, a.checkAs(c, info)
	}
	if loc, err := vault.Locate(a.dir()); err == nil {
		c, err := a.discover(loc)
		if c != nil || err != nil {
			return c, err
		}
		if a.mustServe {
			return nil, errors.New("this command would open the vault itself: no server answered for it")
		}
	}
	return a.openApp()
}

// discover returns a client of the server that runs on the vault at loc,
// working in loc's working tree; nil when none runs there. A server file
// that names a server that does not answer, that serves another folder
// (the vault was copied or moved), or whose token no longer works is left
// alone: the vault is then opened here.
func (a *cli) discover(loc *vault.Location) (*httpapi.Client, error) {
	f, err := httpapi.ReadServerFile(loc.Vault)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return nil, nil
	case err != nil:
		a.logger().Warn("not using the server file", "err", err, "hint", cairn.ErrorHint(err))
		return nil, nil
	}
	c, proven, err := f.Client()
	if err != nil {
		a.logger().Warn("not using the server file", "err", err)
		return nil, nil
	}
	// The server proves it is this user's before it gets the token: a
	// server that died leaves its port to whoever takes it. Through the
	// vault's socket, the peer's user is checked at each connection.
	if !proven {
		if err := c.Verify(a.ctx, f.Key); err != nil {
			a.logger().Debug("the server file names a server that does not answer for it", "url", f.URL, "err", err)
			return nil, nil
		}
	}
	// One request finds the working tree and tells of the vault; a server
	// of another folder (the vault was copied or moved) refuses it.
	found, err := c.UseTreeIn(a.ctx, loc.Vault, loc.Tree)
	if cairn.ErrorCode(err) == cairn.EINVALID {
		// A server older than the request's vault field, or a tree this
		// one refuses: asked as before, the vault first.
		found, err = a.useTreeAfterVault(c, loc)
		if found == nil && err == nil {
			a.logger().Debug("the server file names a server of another folder", "url", f.URL)
			return nil, nil
		}
	}
	switch code := cairn.ErrorCode(err); {
	case err == nil:
	case code == cairn.ENOTFOUND:
		// No working tree of the vault here: the command works in none.
		info, verr := c.Vault(a.ctx)
		if verr != nil {
			a.logger().Debug("the server file names a server that does not answer for it", "url", f.URL, "err", verr)
			return nil, nil
		}
		found = &httpapi.WorktreeFound{Vault: info}
	case code == cairn.ECONFLICT || code == cairn.EUNAVAILABLE || code == cairn.EUNAUTHORIZED:
		a.logger().Debug("the server file names a server that does not answer for this folder", "url", f.URL, "err", err)
		return nil, nil
	default:
		return nil, err
	}
	info := found.Vault
	if !vault.SameFolder(info.Root, loc.Vault) {
		a.logger().Debug("the server file names a server of another folder", "url", f.URL, "root", info.Root)
		return nil, nil
	}
	a.printRepairs(append(info.Repaired, found.Repaired...), info.Problems)
	return c, a.checkAs(c, info)
}

// useTreeAfterVault asks the server for its vault, then, when it is the
// vault at loc, for loc's working tree (none when loc's folder is no
// working tree of it): nil and no error when the server serves another
// folder.
func (a *cli) useTreeAfterVault(c *httpapi.Client, loc *vault.Location) (*httpapi.WorktreeFound, error) {
	info, err := c.Vault(a.ctx)
	if err != nil {
		return nil, cairn.Errorf(cairn.EUNAVAILABLE, "the server does not answer for the vault: %w", err)
	}
	if !vault.SameFolder(info.Root, loc.Vault) {
		return nil, nil
	}
	repaired, err := c.UseTree(a.ctx, loc.Tree)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, err
	}
	return &httpapi.WorktreeFound{Vault: info, Repaired: repaired}, nil
}

// printRepairs prints what opening the vault put right and what it found
// wrong, unless the command reports them itself.
func (a *cli) printRepairs(repaired, problems []string) {
	if a.quiet {
		return
	}
	for _, r := range repaired {
		fmt.Fprintf(a.stderr, "cairn: %s\n", r)
	}
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "cairn: warning: %s\n", p)
	}
}

// checkAs refuses an explicit --as that is not the principal of the
// server's token: through a server, a command acts as its token says.
func (a *cli) checkAs(c *httpapi.Client, info *httpapi.VaultInfo) error {
	if a.as == "" {
		return nil
	}
	p, err := a.principal()
	if err != nil || p == info.Principal {
		return err
	}
	return cairn.Errorf(cairn.EINVALID, "through the server at %s you act as %s, its token's principal, not as %s", c.URL(), info.Principal, p).
		WithHint("Leave out --as, or use a token of " + string(p) + " ($CAIRN_TOKEN with --server).")
}

// local opens the vault here for a command that works on this machine's
// folders or runs jobs (init, import, export, worktree add and remove,
// worker, serve): it refuses --server, which it cannot go through.
func (a *cli) local(what string) (*app.App, error) {
	if u := a.serverURL(); u != "" {
		return nil, usage{msg: fmt.Sprintf("cairn %s works on a vault of this machine; it does not go through a server (%s)", what, u),
			hint: "Run it on the server's machine without --server and $CAIRN_SERVER."}
	}
	return a.openApp()
}

// openApp opens the vault the command works on here, through the
// application layer, and prints what opening repaired and what it could
// not.
func (a *cli) openApp() (*app.App, error) {
	c, err := app.Open(a.ctx, a.dir(), a.appOptions())
	if err != nil {
		return nil, err
	}
	a.printRepairs(c.Repaired(), c.Problems())
	return c, nil
}

// appOptions are the options of the application layer: the logger and the
// test hooks of vaultOptions.
func (a *cli) appOptions() *app.Options {
	vo := a.vaultOptions()
	return &app.Options{Logger: a.logger(), BusyTimeout: vo.BusyTimeout, Crash: vo.Crash, Database: cmpOr(a.database, os.Getenv("CAIRN_DATABASE")), Bulk: a.bulk,
		Tools: mcpserver.AgentTools(version(), a.logger()), Drafts: mcpserver.AgentDrafts(version(), a.logger())}
}

func (a *cli) vaultOptions() *vault.Options {
	opts := &vault.Options{}
	if point := os.Getenv("CAIRN_CRASH_AT"); point != "" {
		// Crash tests: die at a named point, as a power cut would.
		opts.Crash = func(p string) {
			if p == point {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				time.Sleep(time.Hour)
			}
		}
	}
	if ms := os.Getenv("CAIRN_BUSY_TIMEOUT_MS"); ms != "" {
		var n int
		fmt.Sscan(ms, &n)
		opts.BusyTimeout = time.Duration(n) * time.Millisecond
	}
	return opts
}

// interactive reports whether progress may be drawn: stderr is a terminal
// and the output is not JSON.
func (a *cli) interactive() bool {
	if a.json {
		return false
	}
	f, ok := a.stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// treePaths returns the paths given on the command line as paths from the
// working tree's root: a relative path is taken from the current folder
// when that is inside the tree (as git does), else from the root. A path
// outside the tree is EINVALID. No paths give none.
func treePaths(svc app.Service, args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	tree := svc.WorkTree()
	if tree == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "this command works in a working tree, and the current folder is not in one").
			WithHint("Run it inside the vault's folder, or in one made with cairn worktree add")
	}
	root, err := filepath.Abs(tree)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	from := root
	if wd, err := os.Getwd(); err == nil {
		if w, err := filepath.EvalSymlinks(wd); err == nil {
			wd = w
		}
		if rel, err := filepath.Rel(root, wd); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			from = wd
		}
	}
	out := make([]string, 0, len(args))
	for _, arg := range args {
		abs := arg
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(from, arg)
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, cairn.Errorf(cairn.EINVALID, "%s is not inside the working tree %s", arg, root).
				WithHint("Name files or folders of the working tree; cairn status lists its edits.")
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}
