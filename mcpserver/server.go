// Package mcpserver is cairn's MCP server: the agents' surface of a vault,
// over stdio (cairn mcp) and over streamable HTTP (mounted by cairn serve
// at /mcp), on the official go-sdk.
//
// Every tool is small, annotated and bounded: reads go through an
// app.View (main, a revision, a draft or an agent's workspace folder),
// each result fits a byte budget and says what it cut, and every write is
// a change to main through admission, checked against the version of each
// file the agent read: a stale one is a conflict result, never an
// overwrite. Tools are listed to a caller only when its scopes allow them
// (read, propose, review); each call checks again. The tools, their
// arguments and results are documented in docs/mcp.md.
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cairn"
	"cairn/agent"
	"cairn/app"
	"cairn/auth"
	"cairn/worktree"
)

// Options configure a Server. The zero value gives the defaults.
type Options struct {
	// View is what the read tools read. Default: main, followed live.
	View *app.View
	// Draft, when set, is where the write tools write, and what the read
	// tools read (its View): the draft of a job's built-in agent, which
	// becomes one proposal when the agent is done. The tools that change
	// main otherwise (propose, ingest, review_decide) are not offered.
	Draft *app.Draft
	// Scope, when set, is a working set the read tools keep to (see
	// app.View.Scoped).
	Scope []string
	// Version is cairn's version, told to clients. Default "dev".
	Version string
	// MaxResult is the byte budget of one tool result. Default 32 KiB
	// (about 8k tokens, well under the 25k tokens clients accept).
	MaxResult int
	// Logger receives what goes wrong. Default: discard.
	Logger *slog.Logger
	// Extend, when set, adds to every mcp.Server the Server makes: it is
	// given the options the mcp.Server is about to be made with (to set
	// capabilities and handlers), and what it returns, when not nil, is
	// called on the new mcp.Server after cairn's own tools, resources and
	// prompts are added. Only cairn's conformance test sets it, to serve
	// the suite's fixtures beside cairn's tools.
	Extend func(*mcp.ServerOptions) func(*mcp.Server)
}

// Server serves the MCP tools, resources and prompts of one vault.
type Server struct {
	a     *app.App
	view  *app.View
	opts  Options
	log   *slog.Logger
	tools []tool
	// cache keeps the tools' schemas.
	cache *mcp.SchemaCache
	// servers keeps the mcp.Server of each token a stateless HTTP request
	// came with: making one adds every tool, which costs more than most
	// calls. A token's principal and scopes never change; one revoked or
	// expired is refused before its server is looked up.
	servers *lru.Cache[string, *mcp.Server]
}

// New returns the MCP server of the vault a has open.
func New(a *app.App, opts *Options) *Server {
	o := *cmp.Or(opts, &Options{})
	o.Version = cmp.Or(o.Version, "dev")
	o.MaxResult = cmp.Or(o.MaxResult, 32<<10)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	servers, _ := lru.New[string, *mcp.Server](256)
	view := cmp.Or(o.View, a.View(""))
	if o.Draft != nil {
		view = o.Draft.View()
	}
	if o.Scope != nil {
		view = view.Scoped(o.Scope)
	}
	s := &Server{a: a, view: view, opts: o, log: o.Logger, cache: mcp.NewSchemaCache(), servers: servers}
	s.tools = s.catalog()
	return s
}

// Caller is who calls the tools: a principal with scopes. Over HTTP it is
// the bearer token's; over stdio, the one cairn mcp was started as.
type Caller struct {
	// Token is the caller's token: over HTTP the bearer token; over stdio
	// one made up for the process (ID "stdio").
	Token *auth.Token
	// FromClient, over stdio without --as, takes the principal
	// agent:<client name> from the client's initialize request.
	FromClient bool
}

// Stdio returns the caller of a stdio server: as (a principal; "" with
// FromClient) with scopes.
func Stdio(as cairn.Principal, scopes []auth.Scope) *Caller {
	return &Caller{Token: &auth.Token{ID: "stdio", Name: "stdio", Principal: as, Scopes: scopes}, FromClient: as == ""}
}

// principal returns the caller's principal for a request of session ss.
func (c *Caller) principal(ss *mcp.ServerSession) cairn.Principal {
	if !c.FromClient {
		return c.Token.Principal
	}
	name := "mcp"
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
			name = ip.ClientInfo.Name
		}
	}
	return clientPrincipal(name)
}

// clientPrincipal makes agent:<name> of a client's name, keeping only the
// characters a principal's name may hold.
func clientPrincipal(name string) cairn.Principal {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._@+-", r):
			b.WriteRune(r)
		case r == ' ' || r == '/':
			b.WriteByte('-')
		}
		if b.Len() >= 100 {
			break
		}
	}
	return cairn.Agent(cmp.Or(b.String(), "mcp"))
}

// context returns ctx acting as the caller.
func (c *Caller) context(ctx context.Context, ss *mcp.ServerSession) context.Context {
	p := c.principal(ss)
	tok := *c.Token
	tok.Principal = p
	return cairn.NewContextWithPrincipal(auth.NewContext(ctx, &tok), p)
}

// MCP returns an mcp.Server holding what caller may use.
func (s *Server) MCP(caller *Caller) *mcp.Server {
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.log,
		SchemaCache:  s.cache,
		Capabilities: &mcp.ServerCapabilities{},
		// What the server lists and reads depends on the caller's token
		// (its scopes, the vault it may read): a result may be cached by
		// the caller's client only, never by an intermediary for others.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	}
	var extend func(*mcp.Server)
	if s.opts.Extend != nil {
		extend = s.opts.Extend(opts)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "cairn", Title: "cairn", Version: s.opts.Version}, opts)
	for _, t := range s.tools {
		if caller.Token.Has(t.scope) {
			srv.AddTool(t.def, s.handler(t, caller))
		}
	}
	if caller.Token.Has(auth.Read) {
		s.addResources(srv, caller)
	}
	if extend != nil {
		extend(srv)
	}
	return srv
}

const instructions = "cairn is a knowledge base of linked Markdown pages. Find pages with search and list_pages, " +
	"read them with read_page, follow links with neighbors, links and backlinks. Every write is a change that " +
	"admission admits, holds for a person's review or rejects: send expected_hash, the hash read_page gave, so " +
	"that you never overwrite a change you did not see. Sources go in with ingest. The prompt 'guide' says how " +
	"this vault wants its pages written."

// Run serves the caller over the transport t (stdio: &mcp.StdioTransport{})
// until the client goes or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport, caller *Caller) error {
	return s.MCP(caller).Run(ctx, t)
}

// Authenticate returns the caller of an HTTP request: the one its
// surface authenticated (auth.FromContext), or nil.
type Authenticate func(r *http.Request) *Caller

// Handler returns the streamable HTTP handler, stateless: each request
// gets an mcp.Server holding what its caller may use. A call is answered
// as an event stream (text/event-stream), so that what a tool sends while
// it runs (progress, log messages) reaches the client before its result;
// an answer as one JSON body would drop them, as a stateless server has no
// other stream to send them on.
// Authentication, rate limits and host checks are the mounting server's;
// a request without a caller gets 401. maxBody bounds a request's body.
func (s *Server) Handler(caller Authenticate, maxBody int64) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		c := caller(r)
		if c == nil {
			return nil
		}
		key := c.Token.ID + "\x00" + string(c.Token.Principal)
		if srv, ok := s.servers.Get(key); ok {
			return srv
		}
		srv := s.MCP(c)
		s.servers.Add(key, srv)
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log, MaxRequestBodyBytes: maxBody})
	// A browser's request from another origin is refused (403): a web page
	// cannot reach the server by DNS rebinding with a name of its own.
	return http.NewCrossOriginProtection().Handler(h)
}

// tool is one tool of the catalog: its definition, the scope it needs,
// and its handler.
type tool struct {
	def   *mcp.Tool
	scope auth.Scope
	run   func(ctx context.Context, c *call, args json.RawMessage) (any, error)
}

// call is one tool call: the server, the caller's request.
type call struct {
	s      *Server
	caller *Caller
	req    *mcp.CallToolRequest
}

// handler runs t for caller: checks the scope, decodes and validates the
// arguments, runs it as the caller, and renders the result or the error.
func (s *Server) handler(t tool, caller *Caller) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if t.scope != auth.Read {
			auth.Changing(ctx, t.def.Name) // audited, refused or not
		}
		if !caller.Token.Has(t.scope) {
			return errorResult(cairn.Errorf(cairn.EFORBIDDEN, "%s needs the %s scope, which %s lacks", t.def.Name, t.scope, caller.Token.Principal)), nil
		}
		ctx = caller.context(ctx, req.Session)
		out, err := t.run(ctx, &call{s: s, caller: caller, req: req}, req.Params.Arguments)
		var res *mcp.CallToolResult
		var re *resultError
		switch {
		case err == nil:
			res = &mcp.CallToolResult{}
		case errors.As(err, &re):
			res, out = &mcp.CallToolResult{IsError: true}, re.out
		default:
			if cairn.ErrorCode(err) == cairn.EINTERNAL {
				s.log.Error("tool failed", "tool", t.def.Name, "err", err)
			}
			return errorResult(err), nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("%s: encode the result: %w", t.def.Name, err)
		}
		res.StructuredContent = json.RawMessage(data)
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(data)}}
		return res, nil
	}
}

// resultError is a tool's answer that is an error with a structured
// result (a stale write's conflict).
type resultError struct{ out any }

func (e *resultError) Error() string { return "the tool's answer is an error" }

// errorResult renders err as a tool error: its code, message and hint,
// as text and as structured content.
func errorResult(err error) *mcp.CallToolResult {
	code := cairn.ErrorCode(err)
	msg := err.Error()
	if code == cairn.EINTERNAL {
		msg = "the server failed to answer this call; its log has the details"
	}
	e := toolErr{Error: msg, Code: string(code), Hint: cairn.ErrorHint(err)}
	data, _ := json.Marshal(e)
	text := code + ": " + msg
	if e.Hint != "" {
		text += "\nHint: " + e.Hint
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(data)}
}

// toolErr is the structured content of a tool error.
type toolErr struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Hint  string `json:"hint,omitempty"`
}

// typeSchemas are the schemas of the domain's types that encode as text.
var typeSchemas = func() map[reflect.Type]*jsonschema.Schema {
	str := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: desc} }
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[cairn.Hash]():      str("a SHA-256 hash, 64 hex digits"),
		reflect.TypeFor[time.Time]():       str("a time, RFC 3339"),
		reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	}
}

// schemaOf is the JSON schema of T, the domain's hashes and times as
// strings.
func schemaOf[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas(), IgnoreInvalidTypes: true})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	return sc
}

// encoded is sc as JSON.
func encoded(sc *jsonschema.Schema) json.RawMessage {
	data, err := json.Marshal(sc)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: encode a schema: %v", err))
	}
	return data
}

// annotations says what a tool does to the vault: reads (read-only,
// idempotent), or writes (destructive when it can remove or replace).
func annotations(title string, read, destructive, idempotent bool) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: read, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &f}
}

// define makes a tool whose arguments are In and whose result is Out: the
// schemas derive from the types, arguments are decoded strictly (an
// unknown or ill-typed argument is refused) and the result is cut to the
// budget by run.
func define[In, Out any](name, title, desc string, scope auth.Scope, ann *mcp.ToolAnnotations,
	run func(ctx context.Context, c *call, in In) (Out, error)) tool {
	in, out := schemaOf[In](), schemaOf[Out]()
	// A result is an object, never null (Out is a pointer to one).
	out.Types, out.Type = nil, "object"
	if in.Type == "object" && in.AdditionalProperties == nil {
		in.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	ann.Title = title
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: %s: %v", name, err))
	}
	// The schemas go to the SDK encoded: it encodes a tool's input schema
	// again on every call over HTTP (looking for header annotations), which
	// for a *jsonschema.Schema costs more than most calls' own work.
	return tool{
		def:   &mcp.Tool{Name: name, Title: title, Description: desc, Annotations: ann, InputSchema: encoded(in), OutputSchema: encoded(out)},
		scope: scope,
		run: func(ctx context.Context, c *call, args json.RawMessage) (any, error) {
			var v In
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			var raw any
			if err := json.Unmarshal(args, &raw); err != nil {
				return nil, cairn.Errorf(cairn.EINVALID, "the arguments are not JSON: %v", err)
			}
			if err := resolved.Validate(raw); err != nil {
				return nil, cairn.Errorf(cairn.EINVALID, "the arguments do not fit %s: %v", name, err).
					WithHint("tools/list gives each tool's input schema.")
			}
			dec := json.NewDecoder(strings.NewReader(string(args)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&v); err != nil {
				return nil, cairn.Errorf(cairn.EINVALID, "the arguments do not fit %s: %v", name, err)
			}
			return run(ctx, c, v)
		},
	}
}

// budget is the result budget in bytes.
func (c *call) budget() int { return c.s.opts.MaxResult }

// fit cuts list (a slice inside out) until out encodes within the budget,
// and returns how many items it kept; set records what was cut.
func fit[T any](c *call, out any, list *[]T) (kept int, cut bool) {
	for {
		data, err := json.Marshal(out)
		if err != nil || len(data) <= c.budget() || len(*list) == 0 {
			return len(*list), cut
		}
		over := float64(len(data)-c.budget()) / float64(len(data))
		n := len(*list) - max(1, int(float64(len(*list))*over)+1)
		*list = (*list)[:max(0, n)]
		cut = true
	}
}

// cutText cuts s to at most n bytes at a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// AgentTools returns what serves the MCP tools to the agent of an ingest
// job (app.Options.Tools): read-only, on a view of its workspace folder
// as a draft on the job's base commit, so that what the agent wrote so
// far is what it finds. The agent acts as agent:<its client's name>.
func AgentTools(version string, logger *slog.Logger) func(*app.App) agent.ServeTools {
	return func(a *app.App) agent.ServeTools {
		return func(ctx context.Context, conn io.ReadWriteCloser, base cairn.Hash, dir string, snap *worktree.Snapshot) error {
			s := New(a, &Options{View: a.FolderView(base.String(), dir, snap), Version: version, Logger: logger})
			// The transport closes its reader and its writer: one
			// connection, closed once.
			once := &closeOnce{ReadWriteCloser: conn}
			err := s.Run(ctx, &mcp.IOTransport{Reader: once, Writer: once}, Stdio("", []auth.Scope{auth.Read}))
			if err != nil && (ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "EOF")) {
				return nil
			}
			return err
		}
	}
}

// closeOnce is a connection whose Close closes it the first time only.
type closeOnce struct {
	io.ReadWriteCloser
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.ReadWriteCloser.Close() })
	return c.err
}
