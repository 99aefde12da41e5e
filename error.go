package cairn

import (
	"errors"
	"fmt"
)

// Error codes: a small closed set, each mapped once per surface (CLI exit
// code and message, HTTP status, MCP error result).
const (
	EINVALID      = "invalid"      // bad input: the caller must change the request
	ENOTFOUND     = "not_found"    // the named thing does not exist (or its content was purged)
	ECONFLICT     = "conflict"     // the state moved under the caller, or a merge cannot be made
	EUNAUTHORIZED = "unauthorized" // no or bad credentials
	EFORBIDDEN    = "forbidden"    // the principal lacks the scope
	EUNAVAILABLE  = "unavailable"  // a lock or service could not be had in time; retrying may work
	EINTERNAL     = "internal"     // a bug or a corrupted store
)

// Error is cairn's application error. Message is for the person reading it;
// Hint, when set, suggests the next step ("Try: cairn status").
type Error struct {
	Code    string
	Message string
	Hint    string
	Err     error // the wrapped cause, if any
}

// Error returns the message, or the cause's when there is no message. A
// message made by Errorf already holds its cause's text.
func (e *Error) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message. A %w
// verb in format wraps its argument as the cause, as with fmt.Errorf.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// WithHint returns a copy of e that carries hint.
func (e *Error) WithHint(hint string) *Error {
	c := *e
	c.Hint = hint
	return &c
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorHint returns the first hint found in err's chain, or "".
func ErrorHint(err error) string {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ""
		}
		if e.Hint != "" {
			return e.Hint
		}
		err = e.Err
	}
	return ""
}

// ErrPurged is the cause of every error returned for an object whose content
// was removed by a purge. The object's hash stays in history.
var ErrPurged = &Error{Code: ENOTFOUND, Message: "content purged"}

// ErrNotFound is a generic cause for missing things; most not-found errors
// are *Error values with code ENOTFOUND and a specific message instead.
var ErrNotFound = &Error{Code: ENOTFOUND, Message: "not found"}
