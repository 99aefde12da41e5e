// Package httpapi is cairn's HTTP API: JSON over HTTP under /api/v1 for
// every operation of the application layer, an OpenAPI 3.1 document at
// /openapi.json generated from the Go types the handlers use, errors as
// RFC 9457 problem details, a live event stream (server-sent events) at
// /api/v1/events, and the typed Go client (Client) that the command line
// uses against a server.
//
// Every request under /api/v1 is authenticated with a bearer token (loopback
// included) by the vault's one authorizer (app.App.Authorizer); each route
// declares the scope it needs in one table (routes.go). Requests are rate
// limited per token, every change asked is audited, and requests naming a
// host the server does not answer for are refused (DNS rebinding). /healthz
// and /readyz answer without a token and hold no vault data.
package httpapi

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
	"net/netip"
	"path"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

// Options configure a Server. The zero value gives the defaults.
type Options struct {
	// Logger receives what the server does and what goes wrong. Default:
	// discard.
	Logger *slog.Logger
	// Version is cairn's version, in the OpenAPI document. Default "dev".
	Version string
	// Hosts are the host names requests may name beside loopback names
	// and IP addresses (the names the server is reached by). Default none.
	Hosts []string
	// MaxBody is the largest request body of a changeset or an upload.
	// Default 64 MiB. Other requests take at most 1 MiB.
	MaxBody int64
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// every connection. Defaults 10s, 2m, 2m and 2m. A stream (events, an
	// ingest that waits for its verdicts) extends its write deadline as it
	// writes.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// BodyTimeout bounds how long a request's body may take to arrive
	// once its headers have: a client that never finishes it gets 408.
	// Default 10s.
	BodyTimeout time.Duration
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// when it stops. Default 30s.
	ShutdownTimeout time.Duration
	// ProofKey, when set, is the secret /healthz proves the server holds
	// (see ServerFile.Key and Client.Verify).
	ProofKey string
}

func (o *Options) withDefaults() Options {
	c := *o
	c.Logger = cmp.Or(c.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c.Version = cmp.Or(c.Version, "dev")
	c.MaxBody = cmp.Or(c.MaxBody, 64<<20)
	c.ReadHeaderTimeout = cmp.Or(c.ReadHeaderTimeout, 10*time.Second)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, 2*time.Minute)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, 2*time.Minute)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, 2*time.Minute)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, 30*time.Second)
	c.BodyTimeout = cmp.Or(c.BodyTimeout, 10*time.Second)
	return c
}

// Server is the HTTP API of one open vault.
type Server struct {
	app     *app.App
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	api     huma.API
	limits  *limiter
	hub     *hub
	stopHub context.CancelFunc
	hubDone chan struct{}
	audits  *auditor
	// fallback serves the paths outside the API that no route takes.
	fallback http.Handler
	// streams counts each token's open event streams.
	streams map[string]int
	handler http.Handler
	// stopping is closed when the server begins to stop: streams end.
	stopping  chan struct{}
	stopOnce  sync.Once
	closeOnce sync.Once
	// inflight counts the requests being served, so that a forced stop
	// waits for their handlers before the audit is closed; busy is their
	// number.
	inflight sync.WaitGroup
	busy     atomic.Int64
	// ready is set while Serve serves; /readyz answers 503 otherwise.
	// repaired is what opening the vault put right, until a client is
	// told (GET /api/v1/vault).
	mu       sync.Mutex
	ready    bool
	repaired []string
}

// takeRepaired returns what opening the vault put right, once.
func (s *Server) takeRepaired() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := nonNil(s.repaired)
	s.repaired = nil
	return r
}

// New returns the HTTP API of the vault a has open, its background work
// (the watch for new events, the audit) started. Serve serves it; or
// Handler returns it for a server of the caller's, who calls Close once it
// serves no more.
func New(a *app.App, opts *Options) *Server {
	o := cmp.Or(opts, &Options{}).withDefaults()
	s := &Server{app: a, opts: o, log: o.Logger, mux: http.NewServeMux(), stopping: make(chan struct{}), repaired: a.Repaired(),
		streams: map[string]int{}}
	s.limits = newLimiter(a)
	s.hub = newHub(a, o.Logger)
	hubCtx, cancelHub := context.WithCancel(context.Background())
	s.stopHub = cancelHub
	s.hubDone = make(chan struct{})
	go func() {
		defer close(s.hubDone)
		s.hub.run(hubCtx)
	}()
	s.audits = newAuditor(a, o.Logger)
	go s.audits.run()
	s.api = humago.New(s.mux, s.config())
	s.routes()
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("/", s.notFound)
	s.handler = s.track(s.recoverPanics(s.mux))
	return s
}

// config is the huma configuration: the OpenAPI document at /openapi.json
// (and .yaml), no documentation page (it would load scripts from a CDN),
// no $schema links in responses, unknown query parameters refused.
func (s *Server) config() huma.Config {
	cfg := huma.DefaultConfig("cairn", s.opts.Version)
	cfg.Info.Description = "The HTTP API of a cairn vault: every operation of its application layer. " +
		"Every route under /api/v1 needs a bearer token (cairn token create) holding the scope the route names."
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.CreateHooks = nil
	cfg.RejectUnknownQueryParameters = true
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "A token made with cairn token create: Authorization: Bearer cairn_…"},
	}
	cfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	return cfg
}

// schemaName names a Go type's schema: the domain's types (package cairn)
// and the API's own by their names, others prefixed by their package
// (LintFinding beside Finding, AppProblem beside Problem), so that types
// of one name in two packages do not clash.
func schemaName(t reflect.Type, hint string) string {
	name := huma.DefaultSchemaNamer(t, hint)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch pkg := t.PkgPath(); pkg {
	case "", "cairn", "cairn/httpapi":
		return name
	default:
		base := path.Base(pkg)
		return strings.ToUpper(base[:1]) + base[1:] + name
	}
}

// Handler returns the server's handler: the API, /healthz and /readyz.
// Requests naming a host it does not answer for are refused only by Serve,
// which knows its address; a caller serving Handler itself checks hosts.
func (s *Server) Handler() http.Handler { return s.handler }

// OpenAPI returns the API's OpenAPI document.
func (s *Server) OpenAPI() *huma.OpenAPI { return s.api.OpenAPI() }

// Serve serves the API on ln, and on each of more (the vault's socket,
// ListenLocal), until ctx ends, then stops gracefully: streams end,
// requests in flight finish (those still running after ShutdownTimeout
// are cut short), the audit is written, and it returns nil. Connections
// are bounded by the timeouts of Options. It returns an error when a
// listener fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener, more ...net.Listener) error {
	srv := &http.Server{
		Handler:           s.checkHost(ln.Addr(), s.handler),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(s.stop)
	s.setReady(true)
	lns := append([]net.Listener{ln}, more...)
	errc := make(chan error, len(lns))
	for _, l := range lns {
		go func() {
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serve on %s: %w", l.Addr(), err)
			}
		}()
	}
	select {
	case err := <-errc:
		s.setReady(false)
		s.stop()
		srv.Close()
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.setReady(false)
	s.log.Info("stopping: requests in flight finish", "timeout", s.opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running past the timeout (a body that arrives
		// slowly) are cut short: their connections close, their handlers
		// end, and their changes are made or not, each whole.
		s.log.Warn("stopping: requests that did not finish in time are cut short", "timeout", s.opts.ShutdownTimeout)
		srv.Close()
	}
	s.inflight.Wait()
	s.Close()
	return nil
}

// stop ends the streams: they tell their clients the server is stopping.
func (s *Server) stop() { s.stopOnce.Do(func() { close(s.stopping) }) }

func (s *Server) setReady(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = ok
}

// healthz answers that the process serves: no vault data, no token.
// Given a challenge, it proves the server holds its ProofKey.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if c := r.URL.Query().Get("challenge"); c != "" && s.opts.ProofKey != "" && len(c) <= 128 {
		io.WriteString(w, `{"status":"ok","proof":"`+proof(s.opts.ProofKey, c)+`"}`+"\n")
		return
	}
	io.WriteString(w, `{"status":"ok"}`+"\n")
}

// readyz answers whether the server takes requests: it serves and the
// vault's database answers. No vault data, no token.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if ready {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if _, err := s.app.LastEvent(ctx); err != nil {
			s.log.Warn("readiness: the database does not answer", "err", err)
			ready = false
		}
	}
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"unavailable"}`+"\n")
		return
	}
	io.WriteString(w, `{"status":"ready"}`+"\n")
}

// notFound answers every request no route takes, as a problem: 405 with
// the methods the path takes, or 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if s.fallback != nil && r.URL.Path != Base && !strings.HasPrefix(r.URL.Path, Base+"/") {
		s.fallback.ServeHTTP(w, r)
		return
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, newProblem(codeMethodNotAllowed, fmt.Sprintf("%s does not take %s", r.URL.Path, r.Method),
			"It takes "+strings.Join(allow, ", ")+"; GET /openapi.json lists the routes."))
		return
	}
	writeProblem(w, newProblem(cairn.ENOTFOUND, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path),
		"GET /openapi.json lists the routes; they are under /api/v1."))
}

// writeProblem writes p as the response.
func writeProblem(w http.ResponseWriter, p *Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(p)
}

// track counts the requests being served.
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		s.busy.Add(1)
		defer func() {
			s.busy.Add(-1)
			s.inflight.Done()
		}()
		next.ServeHTTP(w, r)
	})
}

// Busy returns how many requests the server is answering now.
func (s *Server) Busy() int { return int(s.busy.Load()) }

// recoverPanics turns a handler's panic into a 500 problem and a logged
// stack, and keeps serving.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				writeProblem(w, newProblem(cairn.EINTERNAL, "the server failed to answer this request",
					"This is a bug in cairn; the server's log has the details."))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses requests whose Host names a host the server does not
// answer for: a web page that got a name of its own resolved to this
// address (DNS rebinding) cannot reach the API. Loopback names, IP
// addresses and Options.Hosts are answered.
func (s *Server) checkHost(addr net.Addr, next http.Handler) http.Handler {
	allowed := map[string]bool{"localhost": true}
	for _, h := range s.opts.Hosts {
		allowed[strings.ToLower(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
		if _, err := netip.ParseAddr(host); err != nil && !allowed[host] {
			writeProblem(w, newProblem(codeMisdirected, fmt.Sprintf("this server does not answer for the host %q", r.Host),
				"Reach it by its address or a loopback name, or start it with --host NAME for each name it is reached by."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorize is the middleware of a route that needs scope: it
// authenticates the bearer token, checks the scope, applies the token's
// rate limit, and runs the route as the token's principal. A route that
// asks for a change is audited with the status it got, refused or not.
func (s *Server) authorize(scope auth.Scope, mutates bool) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		tok, p := s.authenticate(ctx, scope)
		if p != nil {
			writeProblemCtx(ctx, p)
		} else {
			next(huma.WithContext(ctx, auth.NewContext(ctx.Context(), tok)))
		}
		if mutates {
			s.audit(ctx, tok)
		}
	}
}

// authRequest is what authenticating a request reads and writes: its
// headers and context. A huma.Context is one; plainRequest makes one of
// an http.Request.
type authRequest interface {
	Header(name string) string
	SetHeader(name, value string)
	Context() context.Context
}

// plainRequest is an authRequest of a handler mounted beside the API's
// routes.
type plainRequest struct {
	w http.ResponseWriter
	r *http.Request
}

func (p plainRequest) Header(name string) string    { return p.r.Header.Get(name) }
func (p plainRequest) SetHeader(name, value string) { p.w.Header().Set(name, value) }
func (p plainRequest) Context() context.Context     { return p.r.Context() }

// Mount serves h at pattern (an http.ServeMux pattern) behind the API's
// authorizer: each request needs a bearer token holding scope, is rate
// limited as the token's, and runs with the token and an auth.Change in
// its context (auth.FromContext). A request is audited as one of surface
// when it is refused, or when h marks it as asking for a change
// (auth.Changing; the route then names what it asked, "POST /mcp
// write_page"): on the surface Mount serves, MCP, reads and changes alike
// are POSTs, and reads are not audited (every audit row written is a
// commit, after which the database's readers drop their caches).
// challenge, when set, is added to the WWW-Authenticate header of a
// refusal (resource_metadata="…"). Mount before the server serves.
func (s *Server) Mount(pattern string, scope auth.Scope, surface string, challenge func(*http.Request) string, h http.Handler) {
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, p := s.authenticate(plainRequest{w, r}, scope)
		if r.Method != http.MethodGet {
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			w = rec
			change := &auth.Change{}
			r = r.WithContext(auth.NewChangeContext(r.Context(), change))
			defer func() {
				what := change.Asked()
				if p == nil && what == "" {
					return // a read
				}
				a := &auth.Request{Surface: surface, Route: strings.TrimSpace(r.Method + " " + r.URL.Path + " " + what), Remote: r.RemoteAddr, Status: rec.status}
				if tok != nil {
					a.Principal, a.Token = tok.Principal, tok.ID
				}
				s.audits.add(a)
			}()
		}
		if p != nil {
			if challenge != nil && (p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden) {
				w.Header().Set("WWW-Authenticate", w.Header().Get("WWW-Authenticate")+", "+challenge(r))
			}
			writeProblem(w, p)
			return
		}
		h.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), tok)))
	}))
}

// Limit takes one request of t's from its rate (server.rate and
// server.burst): ok, or how long until one would be allowed. A session's
// token counts against the token it came from (auth.Token.Root), so that
// signing in again gives no fresh rate. The web interface limits its
// sessions with it.
func (s *Server) Limit(ctx context.Context, t *auth.Token) (time.Duration, bool) {
	return s.limits.allow(ctx, t.Root())
}

// Stopping is closed when the server begins to stop: a handler that
// streams (the web interface's) ends then.
func (s *Server) Stopping() <-chan struct{} { return s.stopping }

// Fallback serves h for every path outside the API (under /api/v1) that
// no route takes: the web interface, which authenticates its own
// sessions. Set it before the server serves.
func (s *Server) Fallback(h http.Handler) { s.fallback = h }

// MountPublic serves h at pattern without a token. h must answer nothing
// of the vault's (metadata about the server, like RFC 9728's). Mount
// before the server serves.
func (s *Server) MountPublic(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// authenticate returns the request's token, or the problem that refuses
// it (setting the headers that go with it).
func (s *Server) authenticate(ctx authRequest, scope auth.Scope) (*auth.Token, *Problem) {
	h := ctx.Header("Authorization")
	scheme, secret, _ := strings.Cut(h, " ")
	if h == "" || !strings.EqualFold(scheme, "Bearer") {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="cairn"`)
		return nil, newProblem(cairn.EUNAUTHORIZED, "the request has no bearer token",
			"Send Authorization: Bearer <secret>, a token made with cairn token create.")
	}
	tok, err := s.app.Authorizer().Authenticate(ctx.Context(), strings.TrimSpace(secret))
	if err != nil {
		if cairn.ErrorCode(err) == cairn.EUNAUTHORIZED {
			ctx.SetHeader("WWW-Authenticate", `Bearer realm="cairn", error="invalid_token"`)
		} else {
			s.log.Error("authenticate", "err", err)
		}
		return nil, problemOf(err)
	}
	if err := auth.Allow(tok, scope); err != nil {
		ctx.SetHeader("WWW-Authenticate", fmt.Sprintf(`Bearer realm="cairn", error="insufficient_scope", scope=%q`, scope))
		return tok, problemOf(err)
	}
	if wait, ok := s.Limit(ctx.Context(), tok); !ok {
		secs := max(1, int(wait.Round(time.Second)/time.Second))
		ctx.SetHeader("Retry-After", strconv.Itoa(secs))
		return tok, newProblem(codeRateLimited, fmt.Sprintf("token %s sent more requests than its rate allows", tok.ID),
			fmt.Sprintf("Wait %d s (Retry-After); the rate is the vault's setting server.rate.", secs))
	}
	return tok, nil
}

// writeProblemCtx writes p as the answer of a route, from a middleware.
func writeProblemCtx(ctx huma.Context, p *Problem) {
	ctx.SetHeader("Content-Type", "application/problem+json")
	ctx.SetHeader("Cache-Control", "no-store")
	ctx.SetStatus(p.Status)
	enc := json.NewEncoder(ctx.BodyWriter())
	enc.SetEscapeHTML(false)
	enc.Encode(p)
}

// audit records a change asked: who (none for a request without a known
// token), with which token, by which route, from where, and the status it
// got (see auditor).
func (s *Server) audit(ctx huma.Context, tok *auth.Token) {
	op := ctx.Operation()
	r := &auth.Request{Surface: "http", Route: op.Method + " " + op.Path, Remote: ctx.RemoteAddr(), Status: ctx.Status()}
	if tok != nil {
		r.Principal, r.Token = tok.Principal, tok.ID
	}
	s.audits.add(r)
}

// Close stops the server's background work: the watch for new events
// (streams still open end), and the audit, once the rows still queued are
// written. Call it once no request is served any more (Serve calls it
// when it returns; a caller serving Handler itself, when its server has
// stopped). A second call does nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		s.stopHub()
		<-s.hubDone
		s.audits.close()
	})
}

// errStopping ends a stream when the server stops.
var errStopping = errors.New("the server is stopping")
