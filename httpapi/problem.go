package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"cairn"
	"cairn/app"
)

// Problem is an error as the API answers it: RFC 9457 problem details
// (application/problem+json) with cairn's error code and a hint. A refused
// changeset whose base moved also carries the branch's head and, when the
// change did not merge, the structured conflicts.
type Problem struct {
	Type   string `json:"type,omitempty" doc:"A URI reference for the problem type; about:blank"`
	Title  string `json:"title" doc:"The HTTP status's text"`
	Status int    `json:"status" doc:"The HTTP status"`
	Detail string `json:"detail" doc:"What went wrong, for a person"`
	// Code is the problem's code: one of cairn's error codes (invalid,
	// not_found, conflict, unauthorized, forbidden, unavailable, internal)
	// or one of the API's own (malformed, unprocessable, too_large,
	// timeout, rate_limited, precondition_required, not_acceptable,
	// unsupported_media_type, method_not_allowed, misdirected).
	Code string `json:"code" doc:"The problem's code; each code has one HTTP status"`
	Hint string `json:"hint,omitempty" doc:"What to do next"`
	// Head is the branch's head, for a changeset whose base is stale.
	Head cairn.Hash `json:"head,omitzero" doc:"The branch's current head, when the base was stale"`
	// Conflicts are the conflicts of a change that did not merge onto the
	// branch's head.
	Conflicts []cairn.Conflict `json:"conflicts,omitempty" doc:"What did not merge, when the base was stale"`
	// Errors locate each problem of a request that failed the schema.
	Errors []*huma.ErrorDetail `json:"errors,omitempty" doc:"Each problem with the request, located"`
}

// Error returns the detail.
func (p *Problem) Error() string { return p.Detail }

// GetStatus returns the HTTP status (huma.StatusError).
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes JSON problems application/problem+json
// (huma.ContentTypeFilter).
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}

// The API's own problem codes, beside cairn's error codes.
const (
	codeMalformed            = "malformed"
	codeUnprocessable        = "unprocessable"
	codeTooLarge             = "too_large"
	codeTimeout              = "timeout"
	codeRateLimited          = "rate_limited"
	codePreconditionRequired = "precondition_required"
	codeNotAcceptable        = "not_acceptable"
	codeUnsupportedMedia     = "unsupported_media_type"
	codeMethodNotAllowed     = "method_not_allowed"
	codeMisdirected          = "misdirected"
)

// problemCodes maps every problem code to its one HTTP status, and to the
// cairn error code a client reports it as: the one place the API's codes
// are mapped.
var problemCodes = map[string]struct {
	status int
	cairn  string
}{
	cairn.EINVALID:           {http.StatusBadRequest, cairn.EINVALID},
	cairn.ENOTFOUND:          {http.StatusNotFound, cairn.ENOTFOUND},
	cairn.ECONFLICT:          {http.StatusConflict, cairn.ECONFLICT},
	cairn.EUNAUTHORIZED:      {http.StatusUnauthorized, cairn.EUNAUTHORIZED},
	cairn.EFORBIDDEN:         {http.StatusForbidden, cairn.EFORBIDDEN},
	cairn.EUNAVAILABLE:       {http.StatusServiceUnavailable, cairn.EUNAVAILABLE},
	cairn.EINTERNAL:          {http.StatusInternalServerError, cairn.EINTERNAL},
	codeMalformed:            {http.StatusBadRequest, cairn.EINVALID},
	codeUnprocessable:        {http.StatusUnprocessableEntity, cairn.EINVALID},
	codeTooLarge:             {http.StatusRequestEntityTooLarge, cairn.EINVALID},
	codeTimeout:              {http.StatusRequestTimeout, cairn.EINVALID},
	codeRateLimited:          {http.StatusTooManyRequests, cairn.EUNAVAILABLE},
	codePreconditionRequired: {http.StatusPreconditionRequired, cairn.EINVALID},
	codeNotAcceptable:        {http.StatusNotAcceptable, cairn.EINVALID},
	codeUnsupportedMedia:     {http.StatusUnsupportedMediaType, cairn.EINVALID},
	codeMethodNotAllowed:     {http.StatusMethodNotAllowed, cairn.EINVALID},
	codeMisdirected:          {http.StatusMisdirectedRequest, cairn.EINVALID},
}

// statusCodes maps the statuses huma answers by itself to the problem
// code they get.
var statusCodes = map[int]string{
	http.StatusBadRequest:            codeMalformed,
	http.StatusUnprocessableEntity:   codeUnprocessable,
	http.StatusRequestEntityTooLarge: codeTooLarge,
	http.StatusRequestTimeout:        codeTimeout,
	http.StatusNotAcceptable:         codeNotAcceptable,
	http.StatusUnsupportedMediaType:  codeUnsupportedMedia,
	http.StatusMethodNotAllowed:      codeMethodNotAllowed,
	http.StatusNotFound:              cairn.ENOTFOUND,
	http.StatusUnauthorized:          cairn.EUNAUTHORIZED,
	http.StatusForbidden:             cairn.EFORBIDDEN,
	http.StatusConflict:              cairn.ECONFLICT,
	http.StatusServiceUnavailable:    cairn.EUNAVAILABLE,
	http.StatusInternalServerError:   cairn.EINTERNAL,
}

// newProblem returns the problem of code, saying detail, with hint.
func newProblem(code, detail, hint string) *Problem {
	pc, ok := problemCodes[code]
	if !ok {
		code, pc = cairn.EINTERNAL, problemCodes[cairn.EINTERNAL]
	}
	return &Problem{Type: "about:blank", Title: http.StatusText(pc.status), Status: pc.status, Detail: detail, Code: code, Hint: hint}
}

// hints for the problems huma finds by itself, before a handler runs.
var statusHints = map[string]string{
	codeMalformed:        "Send a body of well-formed JSON, and parameters of the types /openapi.json gives.",
	codeUnprocessable:    "The errors list each field that is wrong; /openapi.json has the request's schema (unknown fields are refused).",
	codeTooLarge:         "Send a smaller body; cairn serve --max-body sets the limit.",
	codeTimeout:          "The request's body did not arrive in time; send it whole, promptly.",
	codeNotAcceptable:    "Accept application/json.",
	codeUnsupportedMedia: "Send application/json, or what /openapi.json lists for the route.",
}

// huma builds the errors it finds by itself (and documents their schema)
// with its package variable NewError, the hook it gives for an error model
// of one's own: cairn's problems are made there, for the one API of the
// process.
func init() { huma.NewError = newHumaError }

// newHumaError makes the problems huma finds by itself (a body that is not
// JSON, a field of the wrong type, an unknown field, a body over the
// limit, a body that does not arrive in time) with their problem code and
// hint; it replaces huma.NewError.
func newHumaError(status int, msg string, errs ...error) huma.StatusError {
	code, ok := statusCodes[status]
	if !ok {
		code = cairn.EINTERNAL
		if status < 500 {
			code = codeMalformed
		}
	}
	p := newProblem(code, msg, statusHints[code])
	p.Status, p.Title = status, http.StatusText(status) // huma's status stands
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			p.Errors = append(p.Errors, d.ErrorDetail())
		} else {
			p.Errors = append(p.Errors, &huma.ErrorDetail{Message: err.Error()})
		}
	}
	for _, d := range p.Errors {
		if strings.Contains(d.Message, "request body too large") || strings.Contains(d.Message, "message too large") {
			// A multipart body past the route's limit fails to read.
			q := newProblem(codeTooLarge, "the body is larger than this route takes", statusHints[codeTooLarge])
			return q
		}
		if data, err := json.Marshal(d.Value); err == nil && len(data) > maxEcho {
			d.Value = nil // the location says where; the client has the rest
		}
		d.Location, d.Message = clip(d.Location), clip(d.Message)
	}
	if len(p.Errors) > 0 && (msg == "validation failed" || msg == "") {
		p.Detail = "the request is not valid: " + p.Errors[0].Error()
	}
	return p
}

// maxEcho bounds a value a problem echoes back to the client.
const maxEcho = 256

// clip cuts what a problem repeats of a request (a field's name, say) to
// maxEcho bytes, at a whole character.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// problemOf turns an error of the application layer into its problem:
// the code's status, the message, the hint; a stale base carries the head
// and the conflicts.
// Status is the HTTP status the API answers err with: the one its cairn
// code means (EINVALID 400, ENOTFOUND 404, …; 500 for an error without
// one). The web interface answers with the same.
func Status(err error) int { return problemOf(err).Status }

func problemOf(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	p = newProblem(cairn.ErrorCode(err), err.Error(), cairn.ErrorHint(err))
	var moved *app.Moved
	if errors.As(err, &moved) {
		p.Head, p.Conflicts = moved.Head, moved.Conflicts
	}
	return p
}

// Err turns a problem a server answered back into an error with cairn's
// code (each problem code reports as one cairn code), message and hint; a
// stale base's head and conflicts come back as an *app.Moved cause.
func (p *Problem) Err() error {
	pc, ok := problemCodes[p.Code]
	code := pc.cairn
	if !ok {
		code = cairn.EINTERNAL
		if c, ok := statusCodes[p.Status]; ok {
			code = problemCodes[c].cairn
		}
	}
	msg := p.Detail
	if msg == "" {
		msg = p.Title + " (HTTP " + strconv.Itoa(p.Status) + ")"
	}
	e := &cairn.Error{Code: code, Message: msg, Hint: p.Hint}
	if !p.Head.IsZero() || len(p.Conflicts) > 0 {
		e.Err = &app.Moved{Head: p.Head, Conflicts: p.Conflicts}
	}
	return e
}
