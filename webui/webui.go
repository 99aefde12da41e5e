package webui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/text/language"

	"cairn"
	"cairn/app"
	"cairn/auth"
	"cairn/httpapi"
)

//go:embed templates assets locales
var files embed.FS

// cookieName is the session cookie's name.
const cookieName = "cairn_session"

// contentSecurityPolicy lets a page load only the server's own scripts,
// styles and images, and run no inline script: a page's content that
// slipped past the sanitiser could still not run.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Options adjust the web interface.
type Options struct {
	// Logger receives what goes wrong serving a page. Default: discard.
	Logger *slog.Logger
	// Version is cairn's version, shown in the footer.
	Version string
	// MaxUpload bounds one upload of sources, its files together.
	// Default DefaultMaxUpload.
	MaxUpload int64
	// Limit, when set, takes one request of a session's token from its
	// rate (httpapi.Server.Limit): ok, or how long to wait.
	Limit func(context.Context, *auth.Token) (time.Duration, bool)
	// Done, when set, is closed when the server stops: streams end.
	Done <-chan struct{}
}

// DefaultMaxUpload is the largest upload of sources by default.
const DefaultMaxUpload = 64 << 20

// UI is the web interface of one vault.
type UI struct {
	app    *app.App
	opts   Options
	render *renderer
	// views are the views' templates of each language, parsed when the
	// language is first asked for (views): each set is a few MB of parse
	// trees that a server would otherwise hold, and its collector scan,
	// for ten languages where it serves one or two.
	views   map[string]*viewSet
	matcher language.Matcher
	mux     *http.ServeMux
	h       http.Handler
	// graphs keeps the last graph layouts, by tree, focus and depth.
	graphs *lru.Cache[graphKey, []byte]
}

// New returns the web interface of the vault a has open.
func New(a *app.App, opts *Options) (*UI, error) {
	u := &UI{app: a, render: newRenderer(), views: map[string]*viewSet{}, mux: http.NewServeMux()}
	if opts != nil {
		u.opts = *opts
	}
	if u.opts.Logger == nil {
		u.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := u.parse(); err != nil {
		return nil, err
	}
	u.graphs, _ = lru.New[graphKey, []byte](8)
	cop := http.NewCrossOriginProtection()
	u.routes()
	u.moreRoutes()
	u.graphRoutes()
	u.oauthRoutes(cop)
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, nil, cairn.Errorf(cairn.EFORBIDDEN, "this request came from another site").
			WithHint("Use cairn's own pages to change anything; a form on another site cannot."))
	}))
	u.h = u.secure(cop.Handler(u.mux))
	return u, nil
}

// ServeHTTP serves the interface.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

// secure sets the headers every answer carries: the content security
// policy, no sniffing, no framing, no referrer to other sites, no caching
// of a vault's pages.
func (u *UI) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/assets/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// viewSet is the views' templates of one language, by name, parsed once.
type viewSet struct {
	code  string
	cat   catalog
	once  sync.Once
	views map[string]*template.Template
	err   error
}

// parse makes the views of every language known, English's parsed now: a
// template that does not parse is found at the start (the languages differ
// only in the words their functions give).
func (u *UI) parse() error {
	catalogs, err := loadCatalogs()
	if err != nil {
		return err
	}
	var tags []language.Tag
	for _, l := range languages() {
		tags = append(tags, l.tag)
		u.views[l.Code] = &viewSet{code: l.Code, cat: catalogs[l.Code]}
	}
	u.matcher = language.NewMatcher(tags)
	_, err = u.views["en"].get()
	return err
}

// get returns the set's views, parsing each with the layout the first
// time.
func (vs *viewSet) get() (map[string]*template.Template, error) {
	vs.once.Do(func() {
		names, err := fs.Glob(files, "templates/*.html")
		if err != nil {
			vs.err = err
			return
		}
		vs.views = map[string]*template.Template{}
		for _, n := range names {
			base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
			if base == "layout" || base == "partials" {
				continue
			}
			t, err := template.New(base).Funcs(funcs()).Funcs(langFuncs(vs.code, vs.cat)).
				ParseFS(files, "templates/layout.html", "templates/partials.html", n)
			if err != nil {
				vs.err = fmt.Errorf("parse the web interface's %s: %w", n, err)
				return
			}
			vs.views[base] = t
		}
	})
	return vs.views, vs.err
}

// session is a signed-in person's session, as a request carries it.
type session struct {
	token  *auth.Token
	secret string
}

// CSRF is the session's form key: every form that changes something
// carries it, and a request without it is refused. It is derived from the
// session's secret, which only the session cookie (HttpOnly) holds, so a
// page of another site can neither read it nor guess it.
func (s *session) CSRF() string {
	sum := sha256.Sum256([]byte("cairn-csrf\x00" + s.secret))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Has reports whether the session may do what scope allows.
func (s *session) Has(scope string) bool { return s.token.Has(auth.Scope(scope)) }

// Scopes are what the session may do.
func (s *session) Scopes() []auth.Scope { return s.token.Scopes }

// Who is who the session acts as.
func (s *session) Who() string { return string(s.token.Principal) }

// page is what every view's template gets.
type page struct {
	Title   string
	Nav     string // the navigation entry that is current
	Session *session
	Version string
	Data    any
	// Error is set on an error page: what went wrong and what to do.
	Error *problem
}

// problem is an error as a page shows it.
type problem struct {
	Status  int
	Message string
	Hint    string
}

// handler is a view: it answers the request of a signed-in session, or
// returns an error to show.
type handler func(w http.ResponseWriter, r *http.Request, s *session) error

// handle serves h at pattern for sessions holding scope. A request
// without a session goes to the sign-in page (a GET) or is refused (any
// other method); a POST must carry the session's form key.
func (u *UI) handle(pattern string, scope auth.Scope, h handler) {
	u.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s, err := u.session(r)
		if err != nil {
			if r.Method == http.MethodGet && cairn.ErrorCode(err) == cairn.EUNAUTHORIZED {
				clearCookie(w, r)
				next := r.URL.RequestURI()
				http.Redirect(w, r, "/signin?next="+url.QueryEscape(next)+"&why="+url.QueryEscape(err.Error()), http.StatusSeeOther)
				return
			}
			u.fail(w, r, nil, err)
			return
		}
		if err := auth.Allow(s.token, scope); err != nil {
			u.fail(w, r, s, err)
			return
		}
		if err := u.limit(w, r, s.token); err != nil {
			u.fail(w, r, s, err)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			w = rec
			defer u.audit(r, s, rec)
			r.Body = http.MaxBytesReader(w, r.Body, u.maxUpload())
			if err := parseForm(r); err != nil {
				u.fail(w, r, s, err)
				return
			}
			if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.CSRF())) != 1 {
				u.fail(w, r, s, cairn.Errorf(cairn.EFORBIDDEN, "the form's key is missing or out of date").
					WithHint("Reload the page and try again: each form carries a key of your session."))
				return
			}
		}
		r = r.WithContext(auth.NewContext(r.Context(), s.token))
		if err := h(w, r, s); err != nil {
			u.fail(w, r, s, err)
		}
	})
}

// limit takes one request of t from its rate; past it, an error with
// status 429 and Retry-After.
func (u *UI) limit(w http.ResponseWriter, r *http.Request, t *auth.Token) error {
	if u.opts.Limit == nil {
		return nil
	}
	wait, ok := u.opts.Limit(r.Context(), t)
	if ok {
		return nil
	}
	secs := max(1, int(wait.Round(time.Second)/time.Second))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return statusError{http.StatusTooManyRequests, cairn.Errorf(cairn.EUNAVAILABLE, "too many requests from this token").
		WithHint(fmt.Sprintf("Wait %d s; the rate is the vault's setting server.rate.", secs))}
}

// statusError is an error answered with a status of its own.
type statusError struct {
	status int
	err    error
}

func (e statusError) Error() string { return e.err.Error() }
func (e statusError) Unwrap() error { return e.err }

// parseForm reads a POST's form, multipart (an upload) or not. A body
// past the bound is EINVALID naming it (status 413).
func parseForm(r *http.Request) error {
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(8 << 20)
	} else {
		err = r.ParseForm()
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return cairn.Errorf(cairn.EINVALID, "the request is larger than %s: %w", humanize.IBytes(uint64(tooBig.Limit)), err).
			WithHint("Upload fewer or smaller files at once.")
	case err != nil:
		return cairn.Errorf(cairn.EINVALID, "the form could not be read: %v", err).WithHint("Fill in the form again and send it.")
	}
	return nil
}

// session returns the request's session: the token its cookie names,
// which must be active. No cookie, or an ended session, is EUNAUTHORIZED.
func (u *UI) session(r *http.Request) (*session, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "you are not signed in").WithHint("Sign in with a token.")
	}
	t, err := u.app.Authorizer().Authenticate(r.Context(), c.Value)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.EUNAUTHORIZED {
			return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "your session has ended").WithHint("Sign in again.")
		}
		return nil, err
	}
	return &session{token: t, secret: c.Value}, nil
}

// setCookie sets the session cookie: HttpOnly, SameSite=Strict, Secure
// under TLS, expiring with the session.
func setCookie(w http.ResponseWriter, r *http.Request, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: "/", Expires: expires,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// show writes the view name with data, status 200.
func (u *UI) show(w http.ResponseWriter, r *http.Request, s *session, name, title, nav string, data any) error {
	return u.write(w, r, http.StatusOK, name, page{Title: title, Nav: nav, Session: s, Version: u.opts.Version, Data: data})
}

// write executes a view's template, in the request's language, into the
// response.
func (u *UI) write(w http.ResponseWriter, r *http.Request, status int, name string, p page) error {
	views, err := u.views[u.language(r)].get()
	if err != nil {
		return err
	}
	t, ok := views[name]
	if !ok {
		return fmt.Errorf("no view %q", name)
	}
	var b bytes.Buffer
	tmpl := "layout"
	if strings.HasPrefix(name, "fragment-") {
		tmpl = "content"
	}
	if err := t.ExecuteTemplate(&b, tmpl, p); err != nil {
		return fmt.Errorf("write view %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err = w.Write(b.Bytes())
	return err
}

// fail shows err as an error page with the status its code means.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	p := &problem{Status: status(err), Message: err.Error(), Hint: cairn.ErrorHint(err)}
	if p.Status == http.StatusInternalServerError {
		u.opts.Logger.Error("web interface", "method", r.Method, "path", r.URL.Path, "err", err)
		p.Message = "cairn failed to answer this page"
		p.Hint = "The server's log has the details."
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	if werr := u.write(w, r, p.Status, "error", page{Title: "Error", Session: s, Version: u.opts.Version, Error: p}); werr != nil {
		http.Error(w, p.Message, p.Status)
	}
}

// status is the HTTP status of an error: the API's for its code.
func status(err error) int {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	if se, ok := errors.AsType[statusError](err); ok {
		return se.status
	}
	return httpapi.Status(err)
}

// audit records a request that asked for a change, as the API's are.
func (u *UI) audit(r *http.Request, s *session, rec *statusRecorder) {
	req := &auth.Request{Surface: "web", Route: r.Method + " " + r.URL.Path, Remote: r.RemoteAddr, Status: rec.status}
	if s != nil {
		req.Principal, req.Token = s.token.Principal, s.token.ID
	}
	if err := u.app.AuditRequests(context.WithoutCancel(r.Context()), req); err != nil {
		u.opts.Logger.Warn("web interface: audit", "err", err)
	}
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
