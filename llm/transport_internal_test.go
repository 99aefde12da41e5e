package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestRetryDelay: the wait a Retry-After asks for, up to two minutes;
// past them, or for a value that is no wait, the backoff's.
func TestRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		header, value string
		want          time.Duration // 0: the backoff's
	}{
		{"Retry-After", "90", 90 * time.Second},
		{"Retry-After", "120", 2 * time.Minute},
		{"Retry-After", "121", 0},
		{"Retry-After", "1e400", 0},
		{"Retry-After", "-5", 0},
		{"Retry-After", "NaN", 0},
		{"Retry-After", "0", 0},
		{"Retry-After-Ms", "1500", 1500 * time.Millisecond},
		{"Retry-After-Ms", "120001", 0},
		{"Retry-After", "soon", 0},
	} {
		res := &http.Response{StatusCode: 429, Header: http.Header{}}
		res.Header.Set(tc.header, tc.value)
		d, ok := retryDelay(res, 0)
		if !ok {
			t.Errorf("%s: %s: no retry", tc.header, tc.value)
			continue
		}
		if tc.want == 0 && (d < retryBase*3/4 || d > retryBase) || tc.want != 0 && d != tc.want {
			t.Errorf("%s: %s: wait %s, want %s (0: the backoff's)", tc.header, tc.value, d, tc.want)
		}
	}
}

// TestStreamBound: a stream of exactly maxStream bytes is read; one byte
// more is refused.
func TestStreamBound(t *testing.T) {
	event := "data: x\n\n"
	full, rest := (maxStream-len(event))/1024, (maxStream-len(event))%1024
	pad := strings.Repeat(":"+strings.Repeat(" ", 1022)+"\n", full) + ":" + strings.Repeat(" ", rest-2) + "\n"
	for _, extra := range []int{0, 1} {
		body := pad + strings.Repeat("\n", extra) + event
		if len(body) != maxStream+extra {
			t.Fatalf("the stream has %d bytes, want %d", len(body), maxStream+extra)
		}
		n := 0
		err := readEvents(strings.NewReader(body), func(_ string, data []byte) error { n++; return nil })
		if extra == 0 && (err != nil || n != 1) || extra == 1 && err == nil {
			t.Errorf("a stream of maxStream+%d bytes: %d events, %v", extra, n, err)
		}
	}
}

// TestErrorMessageCut: a long error body that is not JSON is cut on a
// character.
func TestErrorMessageCut(t *testing.T) {
	res := &http.Response{Status: "500", Body: io.NopCloser(strings.NewReader("x" + strings.Repeat("é", 150)))}
	if msg := errorMessage(res); !utf8.ValidString(msg) || len(msg) > 210 {
		t.Errorf("message %q", msg)
	}
}

// TestHeaderTimeout: a provider that never answers the request's header
// is given up after headerTimeout (shortened here).
func TestHeaderTimeout(t *testing.T) {
	tr := newTransport(Config{}).client.Transport.(*http.Transport)
	if tr.ResponseHeaderTimeout != headerTimeout {
		t.Fatalf("ResponseHeaderTimeout = %s", tr.ResponseHeaderTimeout)
	}
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stall }))
	defer srv.Close()
	defer close(stall)
	tr.ResponseHeaderTimeout = 200 * time.Millisecond
	_, err := transport{client: &http.Client{Transport: tr}}.post(t.Context(), srv.URL, http.Header{}, map[string]string{})
	if e, ok := err.(*Error); !ok || e.Kind != ErrTransport {
		t.Errorf("post = %v, want an *Error of kind %s", err, ErrTransport)
	}
}
