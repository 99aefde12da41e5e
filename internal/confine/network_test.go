//go:build linux

package confine_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn"
	"cairn/internal/confine"
)

func init() {
	agents["get"] = getAgent
}

// getAgent GETs each URL of CONFINE_TEST_GET (space-separated) and prints
// "<url> <status> <body>", or "<url> fail" when it could not connect.
func getAgent() int {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	for _, u := range strings.Fields(os.Getenv("CONFINE_TEST_GET")) {
		resp, err := client.Get(u)
		if err != nil {
			fmt.Println(u, "fail")
			fmt.Fprintln(os.Stderr, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(u, resp.StatusCode, string(body))
	}
	return 0
}

// server is an HTTP server on addr that answers its name and counts the
// requests it got.
type server struct {
	URL  string
	Addr string
	hits atomic.Int64
}

func serve(t *testing.T, addr, name string) *server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	s := &server{Addr: ln.Addr().String()}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		io.WriteString(w, name)
	}))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// port returns the port of a "host:port" address.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// hostIP returns an IPv4 address of this machine that is not a loopback
// one, or "" when it has none.
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// TestRun_Network checks that an agent given a Network reaches the
// endpoints it allows — by loopback address, by host name (through its own
// /etc/hosts), by another address of this machine (added to its loopback
// interface), on a port below 1024 — and nothing else: not another port of
// this machine, not the same address at another port. Its requests arrive
// at the real servers. Without namespaces, the result says that the
// network was the machine's.
func TestRun_Network(t *testing.T) {
	namespaces(t)
	allowed := serve(t, "127.0.0.1:0", "allowed")
	other := serve(t, "127.0.0.1:0", "other")
	byName := serve(t, "127.0.0.1:0", "byname")
	allow := []string{allowed.Addr, "localhost:" + port(byName.Addr)}
	gets := []string{allowed.URL, other.URL, "http://localhost:" + port(byName.Addr) + "/"}
	want := []string{allowed.URL + " 200 allowed", other.URL + " fail", "http://localhost:" + port(byName.Addr) + "/ 200 byname"}
	if ip := hostIP(); ip != "" {
		lan := serve(t, "0.0.0.0:0", "lan")
		lanOther := serve(t, "0.0.0.0:0", "lanother")
		allow = append(allow, ip+":"+port(lan.Addr))
		lanURL, lanOtherURL := "http://"+ip+":"+port(lan.Addr)+"/", "http://"+ip+":"+port(lanOther.Addr)+"/"
		gets = append(gets, lanURL, lanOtherURL)
		want = append(want, lanURL+" 200 lan", lanOtherURL+" fail")
	}
	if os.Geteuid() == 0 {
		if ln, err := net.Listen("tcp", "127.0.0.1:443"); err == nil {
			ln.Close()
			low := serve(t, "127.0.0.1:443", "low")
			allow = append(allow, "localhost.:443")
			gets = append(gets, "http://localhost:443/")
			want = append(want, "http://localhost:443/ 200 low")
			_ = low
		}
	}

	ways := map[string]func(context.Context, confine.Spec) (*confine.Result, error){"UserNamespace": confine.Run}
	if os.Geteuid() == 0 {
		ways["NoUserNamespace"] = confine.RunWithoutUserNamespace
	}
	for name, runWay := range ways {
		t.Run(name, func(t *testing.T) {
			before := allowed.hits.Load() + other.hits.Load()
			spec := setup(t)
			out := output{}
			spec.Output = out.record
			spec.Network = &confine.Network{Allow: allow}
			helper(t, &spec, "get", "CONFINE_TEST_GET="+strings.Join(gets, " "))
			res, err := runWay(t.Context(), spec)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Run() = %+v, %v; output %q", res, err, out)
			}
			if res.Net != confine.NetIsolated || res.Contain != confine.ContainNamespace {
				t.Errorf("Run() net %q, contain %q; want isolated in a namespace", res.Net, res.Contain)
			}
			if got := strings.Join(out["stdout"], "\n"); got != strings.Join(want, "\n") {
				t.Errorf("the agent's requests:\n%s\nwant:\n%s\nstderr: %q", got, strings.Join(want, "\n"), out["stderr"])
			}
			if got := allowed.hits.Load() + other.hits.Load() - before; got != 1 {
				t.Errorf("the servers got %d requests, want 1 (the allowed one's)", got)
			}
		})
	}

	t.Run("NoNamespace", func(t *testing.T) {
		t.Setenv("CAIRN_PIDNS", "off")
		spec := setup(t)
		out := output{}
		spec.Output = out.record
		spec.Network = &confine.Network{Allow: []string{allowed.Addr}}
		helper(t, &spec, "get", "CONFINE_TEST_GET="+other.URL)
		res := run(t, t.Context(), spec)
		if res.Net != confine.NetHost || res.Contain != confine.ContainTracking {
			t.Errorf("Run() net %q, contain %q; want the host's network, tracked", res.Net, res.Contain)
		}
	})
}

// TestRun_NetworkClosed checks that a connection the agent leaves open
// ends with the run: the server sees it closed.
func TestRun_NetworkClosed(t *testing.T) {
	namespaces(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			closed <- err
			return
		}
		_, err = io.Copy(io.Discard, c)
		closed <- err
	}()
	spec := setup(t)
	spec.Network = &confine.Network{Allow: []string{ln.Addr().String()}}
	spec.Argv = []string{"sh", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + port(ln.Addr().String()) + " 2>/dev/null || true; sleep 30"}
	if _, err := os.Stat("/bin/bash"); err == nil {
		spec.Argv[0] = "bash"
	}
	spec.Timeout = 2 * time.Second
	res := run(t, t.Context(), spec)
	if res.Reason != confine.ReasonTimeout {
		t.Fatalf("Run() reason %q, want timeout", res.Reason)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("the server's connection ended with %v, want end of file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's connection is still open after the run")
	}
}

// TestCheckAllow checks that endpoints that are not one host's port are
// refused before anything runs.
func TestCheckAllow(t *testing.T) {
	for _, bad := range []string{"", "example.com", "example.com:0", "example.com:70000", "example.com:https",
		"0.0.0.0:80", "[::]:80", "224.0.0.1:80", "exa mple.com:80", "-bad.com:80", "http://example.com:80", "[fe80::1%eth0]:80"} {
		err := confine.CheckAllow([]string{bad})
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("CheckAllow(%q) = %v, want EINVALID with a hint", bad, err)
		}
	}
	for _, good := range []string{"api.anthropic.com:443", "127.0.0.1:8080", "[::1]:8080", "10.0.0.5:11434", "LocalHost:80"} {
		if err := confine.CheckAllow([]string{good}); err != nil {
			t.Errorf("CheckAllow(%q) = %v, want nil", good, err)
		}
	}
}
