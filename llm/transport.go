package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The providers' APIs are spoken here, over net/http, rather than through
// their SDKs: cairn asks each for one streamed turn, and the two SDKs'
// package initialisers cost every cairn command about 6 ms of its start
// (of some 15), with half of the binary's size; see BENCHMARKS.md.

// Bounds of what a provider may send: an error's body, one event of a
// stream (a tool call's arguments arrive in many), a whole stream (a turn
// of 4,096 tokens streams about a megabyte, a chunk of some 250 bytes a
// token).
const (
	maxErrorBody = 1 << 20
	maxEvent     = 16 << 20
	maxStream    = 64 << 20
)

// Retries: the first waits about retryBase, each next twice as long, up
// to retryMax; a Retry-After (or Retry-After-Ms) of at most
// retryAfterMax is honoured instead, and a longer one gets the backoff's
// wait. (Of the SDKs, openai-go gives up at once past two minutes and
// anthropic-sdk-go waits however long it is asked.)
const (
	retryBase     = 500 * time.Millisecond
	retryMax      = 8 * time.Second
	retryAfterMax = 2 * time.Minute
	headerTimeout = 10 * time.Minute // for the answer's header, as anthropic-sdk-go's
)

// transport posts a request for a streamed answer, with retries.
type transport struct {
	client  *http.Client
	retries int
}

func newTransport(cfg Config) transport {
	c := cfg.HTTPClient
	if c == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = headerTimeout
		c = &http.Client{Transport: tr}
	}
	return transport{client: c, retries: cfg.MaxRetries}
}

// post sends body as JSON to url with header, and returns the answer's
// body once the provider answers 2xx. It tries again, after a wait, on a
// connection error and on 408, 409, 429 and 5xx (unless the provider's
// x-should-retry says otherwise), up to t.retries times; what is left is
// an *Error, or the context's error.
func (t transport) post(ctx context.Context, url string, header http.Header, body any) (io.ReadCloser, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llm: encoding the request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
		if err != nil {
			return nil, &Error{Kind: ErrRequest, Message: fmt.Sprintf("the provider's address %q: %v", url, err), Err: err}
		}
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		res, err := t.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if attempt < t.retries {
				if err := wait(ctx, backoff(attempt)); err != nil {
					return nil, err
				}
				continue
			}
			return nil, classify(0, err.Error(), err)
		}
		if res.StatusCode/100 == 2 {
			return res.Body, nil
		}
		msg := errorMessage(res)
		res.Body.Close()
		delay, again := retryDelay(res, attempt)
		if again && attempt < t.retries {
			if err := wait(ctx, delay); err != nil {
				return nil, err
			}
			continue
		}
		return nil, classify(res.StatusCode, msg, nil)
	}
}

// retryDelay says whether an answer of res's status may be tried again,
// and after how long.
func retryDelay(res *http.Response, attempt int) (time.Duration, bool) {
	switch res.Header.Get("X-Should-Retry") {
	case "true":
	case "false":
		return 0, false
	default:
		s := res.StatusCode
		if s != http.StatusRequestTimeout && s != http.StatusConflict && s != http.StatusTooManyRequests && s < 500 {
			return 0, false
		}
	}
	for _, h := range []struct {
		name string
		unit time.Duration
	}{{"Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
		v := res.Header.Get(h.name)
		if v == "" {
			continue
		}
		var d time.Duration
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && f >= 0 {
			d = time.Duration(min(f*float64(h.unit), float64(retryAfterMax+1)))
		} else if at, err := http.ParseTime(v); err == nil {
			d = time.Until(at)
		} else {
			continue
		}
		if d > 0 && d <= retryAfterMax {
			return d, true
		}
		break // 0, a time past or too long a wait: the backoff's
	}
	return backoff(attempt), true
}

// backoff is the wait before the next of attempt's retries: retryBase
// doubled with each, up to retryMax, less up to a quarter at random.
func backoff(attempt int) time.Duration {
	d := retryMax
	if attempt < 5 {
		d = min(retryBase<<attempt, retryMax)
	}
	return d - time.Duration(rand.Int64N(int64(d/4)))
}

// wait waits d, or until ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errorMessage returns what a provider said in an error's body: the
// message of {"error": {"message": ...}} (both APIs' shape), else the
// body's start, else the status.
func errorMessage(res *http.Response) string {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return clip(s, 200)
	}
	return res.Status
}

// clip returns s cut to at most n bytes, on a character, marked "…" when
// cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// readStream reads the events of an answer's body (readEvents) for ctx's
// request: io.EOF from fn ends the stream without an error; what stops it
// otherwise is ctx's error, an *Error fn returned, or any other failure
// of the stream as an *Error of kind ErrStream.
func readStream(ctx context.Context, body io.Reader, fn func(event string, data []byte) error) error {
	err := readEvents(body, fn)
	if err == nil || err == io.EOF {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Kind: ErrStream, Message: err.Error(), Err: err}
}

// readEvents reads a stream of server-sent events, calling fn with each
// event's name ("" when it has none) and data (its data lines joined by
// newlines; an event with no data line is skipped). It stops at the end
// of the stream (nil), at fn's first error (returned as it is), or past
// maxStream bytes with an error.
func readEvents(r io.Reader, fn func(event string, data []byte) error) error {
	lr := &io.LimitedReader{R: r, N: maxStream + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	var event string
	var data []byte
	seen := false // a data line of this event was read
	for {
		line, err := readLine(br)
		if lr.N <= 0 {
			return fmt.Errorf("a stream of more than %d MiB", maxStream>>20)
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			if err != io.EOF {
				return err
			}
			if seen {
				return fn(event, data) // the last event, without its blank line
			}
			return nil
		}
		switch {
		case len(line) == 0:
			if seen {
				if err := fn(event, data); err != nil {
					return err
				}
			}
			event, data, seen = "", data[:0], false
		case line[0] == ':': // a comment
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				event = string(value)
			case "data":
				if seen {
					data = append(data, '\n')
				}
				if len(data)+len(value) > maxEvent {
					return fmt.Errorf("an event of more than %d MiB", maxEvent>>20)
				}
				data, seen = append(data, value...), true
			}
		}
	}
}

// readLine returns the next line of br without its end (\n, \r\n or \r
// before \n), of at most maxEvent bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > maxEvent+2 {
			return nil, fmt.Errorf("a line of more than %d MiB", maxEvent>>20)
		}
		if err == bufio.ErrBufferFull {
			line = append(line, part...)
			continue
		}
		if line == nil {
			line = part // valid until the next read; fn's callers copy what they keep
		} else {
			line = append(line, part...)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return line, err
	}
}
