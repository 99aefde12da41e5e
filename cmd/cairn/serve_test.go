package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/app"
	"cairn/httpapi"
)

// serveProc is a cairn serve running as a child process.
type serveProc struct {
	t     testing.TB
	cmd   *exec.Cmd
	out   *syncBuffer
	done  chan struct{}
	err   error
	vault string
	file  *httpapi.ServerFile
}

// startServe starts cairn serve on a free loopback port in vault, with
// args, and waits until it has written its server file.
func startServe(t testing.TB, vault string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(cairnBin(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = vault
	cmd.Env = append(os.Environ(), "CAIRN_USER=tester")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{t: t, cmd: cmd, out: out, done: make(chan struct{}), vault: vault}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-p.done:
			t.Fatalf("cairn serve exited (%v):\n%s", p.err, out.String())
		default:
		}
		if f, err := httpapi.ReadServerFile(vault); err == nil && f.PID == cmd.Process.Pid {
			p.file = f
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("cairn serve wrote no server file within 30s:\n%s", out.String())
		}
	}
}

// stop sends sig and waits for the process; it returns its exit code (-1
// when a signal ended it).
func (p *serveProc) stop(sig syscall.Signal) int {
	p.t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("cairn serve did not stop within 60s after %v:\n%s", sig, p.out.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// get sends GET path to the server with the owner's token and decodes the
// JSON answer into out.
func (p *serveProc) get(path string, out any) int {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.file.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+p.file.Token)
	client := http.DefaultClient
	if p.file.Cert != "" {
		tr, err := httpapi.TrustTransport(p.file.Cert)
		if err != nil {
			p.t.Fatal(err)
		}
		client = &http.Client{Transport: tr}
	}
	resp, err := client.Do(req)
	if err != nil {
		p.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// audited returns the routes of the changes the server has audited.
func (p *serveProc) audited() []string {
	p.t.Helper()
	var out []string
	for _, r := range p.auditRows() {
		out = append(out, r.Route)
	}
	return out
}

// viaSocket waits until the server has audited a request for the working
// tree (a POST, which every command of the folder makes) that came over
// its socket, from no address.
func (p *serveProc) viaSocket() {
	p.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rows := p.auditRows()
		if slices.ContainsFunc(rows, func(a auditRow) bool {
			return strings.HasSuffix(a.Route, "/worktree") && !strings.Contains(a.Remote, "127.0.0.1")
		}) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no request for the working tree came through the socket; audited: %+v", rows)
		}
	}
}

// auditRow is what audited keeps of an audit row.
type auditRow struct {
	Route  string
	Status int
	Remote string
}

// auditRows returns the rows the server has audited.
func (p *serveProc) auditRows() []auditRow {
	p.t.Helper()
	var a struct{ Items []auditRow }
	if code := p.get("/api/v1/audit?limit=1000", &a); code != 200 {
		p.t.Fatalf("GET /api/v1/audit = %d", code)
	}
	return a.Items
}

// TestServe_Refusals: flags that cannot be served are usage errors (exit
// 2) with a hint, and a second server on a vault that has one is refused.
func TestServe_Refusals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
	must(t, run(t, vault, nil, "init"), "init")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"serve", "--addr", "192.0.2.1:7420"}, "without TLS"},
		{[]string{"serve", "--addr", "7420"}, "is not HOST:PORT"},
		{[]string{"serve", "--tls-cert", "cert.pem"}, "needs both --tls-cert and --tls-key"},
		{[]string{"serve", "--max-body", "lots"}, "--max-body"},
		{[]string{"serve", "--workers", "-1"}, "--workers"},
		{[]string{"--server", "http://127.0.0.1:1", "serve"}, "does not go through a server"},
	} {
		r := run(t, vault, nil, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "Hint:") {
			t.Errorf("cairn %v = exit %d\n%s; want exit 2 saying %q with a hint", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(httpapi.ServerFilePath(vault)); !os.IsNotExist(err) {
		t.Errorf("a refused serve left a server file: %v", err)
	}
	s := startServe(t, vault)
	r := run(t, vault, nil, "serve", "--addr", "127.0.0.1:0")
	if r.code != exitRefused || !strings.Contains(r.stderr, "already serves this vault") {
		t.Errorf("a second cairn serve = exit %d\n%s; want exit 1: a server already serves it", r.code, r.stderr)
	}
	if f, err := httpapi.ReadServerFile(vault); err != nil || f.PID != s.cmd.Process.Pid {
		t.Errorf("the second serve touched the first's server file: %+v, %v", f, err)
	}
}

// TestServe_Graceful: commands in the folder go through the server; on
// SIGTERM it exits 0, removes its server file and revokes its token, and
// commands open the vault themselves again.
func TestServe_Graceful(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n", "a.md": "# A\n\n[[index]]\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	fi, err := os.Stat(httpapi.ServerFilePath(vault))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("server file: %v, %v; want mode 0600", fi, err)
	}
	writeFiles(t, vault, map[string]string{"a.md": "# A\n\nEdited. [[index]]\n"})
	must(t, run(t, vault, nil, "commit", "-m", "through the server"), "commit")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		routes := s.audited() // written moments after the answer
		if strings.Contains(strings.Join(routes, ","), "POST /api/v1/commit") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the commit did not go through the server: audited %v", routes)
		}
	}
	// The owner signs in to the web interface with the link it printed.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.PostForm(s.file.URL+"/signin", url.Values{"token": {signInLink(t, s)}})
	if err != nil {
		t.Fatal(err)
	}
	home, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(home), "<h1>Home</h1>") {
		t.Errorf("signing in with the printed link ends at %d:\n%s", resp.StatusCode, home)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("cairn serve after SIGTERM exited %d:\n%s", code, s.out.String())
	}
	if _, err := os.Stat(httpapi.ServerFilePath(vault)); !os.IsNotExist(err) {
		t.Errorf("the server file outlived the server: %v", err)
	}
	r := run(t, vault, nil, "token", "list", "--json")
	must(t, r, "token list")
	// The owner's token and the sign-in link end with the server; a web
	// session lasts its time, across restarts.
	var toks struct {
		Items []struct{ Name, State string }
	}
	json.Unmarshal([]byte(r.stdout), &toks)
	if len(toks.Items) != 3 {
		t.Errorf("tokens after the server stopped: %+v, want the owner's, the link's and a web session", toks.Items)
	}
	for _, tk := range toks.Items {
		if (strings.HasPrefix(tk.Name, "serve-") || tk.Name == "sign-in-link") && tk.State != "revoked" {
			t.Errorf("token %s is %s after the server stopped, want revoked", tk.Name, tk.State)
		}
	}
	r = run(t, vault, nil, "log", "-n", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "through the server") {
		t.Errorf("cairn log after the server stopped = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestServe_Remote: --server with $CAIRN_TOKEN acts as the token says: a
// read-only token reads and is refused a change (exit 2, forbidden); a
// command that works on local folders refuses --server; no token is a
// usage error.
func TestServe_Remote(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n", "a.md": "# A\n\n[[index]]\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	r := run(t, vault, nil, "token", "create", "--name", "reader", "--scope", "read", "--json")
	must(t, r, "token create")
	var made struct {
		Items []struct{ Secret string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &made); err != nil || len(made.Items) != 1 {
		t.Fatalf("token create --json: %v\n%s", err, r.stdout)
	}
	env := []string{"CAIRN_SERVER=" + s.file.URL, "CAIRN_TOKEN=" + made.Items[0].Secret}
	elsewhere := filepath.Join(root, "elsewhere")
	os.MkdirAll(elsewhere, 0o755)
	r = run(t, elsewhere, env, "search", "home")
	if r.code != 0 || !strings.Contains(r.stdout, "index.md") {
		t.Errorf("cairn search with a read token = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, elsewhere, env, "branch", "draft")
	if r.code != exitUsage || !strings.Contains(r.stderr, "lacks the admin scope") {
		t.Errorf("cairn branch with a read token = %d\n%s; want exit 2, forbidden", r.code, r.stderr)
	}
	r = run(t, elsewhere, env, "status")
	if r.code != exitUsage || !strings.Contains(r.stderr, "works in a working tree") {
		t.Errorf("cairn status outside the vault's folder through a server = %d\n%s; want exit 2: no working tree", r.code, r.stderr)
	}
	r = run(t, elsewhere, env, "export", filepath.Join(root, "out"))
	if r.code != exitUsage || !strings.Contains(r.stderr, "does not go through a server") {
		t.Errorf("cairn export --server = %d\n%s; want a usage error", r.code, r.stderr)
	}
	r = run(t, elsewhere, []string{"CAIRN_SERVER=" + s.file.URL}, "log")
	if r.code != exitUsage || !strings.Contains(r.stderr, "CAIRN_TOKEN") {
		t.Errorf("cairn log --server without a token = %d\n%s; want a usage error naming $CAIRN_TOKEN", r.code, r.stderr)
	}
	r = run(t, elsewhere, []string{"CAIRN_SERVER=" + s.file.URL, "CAIRN_TOKEN=cairn_000000000000_" + strings.Repeat("A", 43)}, "log")
	if r.code != exitUsage || !strings.Contains(r.stderr, "not known") {
		t.Errorf("cairn log --server with an unknown token = %d\n%s; want exit 2, unauthorized", r.code, r.stderr)
	}
	r = run(t, vault, []string{"CAIRN_TOKEN=" + made.Items[0].Secret}, "--server", s.file.URL, "--as", "user:someone", "log")
	if r.code != exitUsage || !strings.Contains(r.stderr, "you act as user:reader") {
		t.Errorf("--as another principal through a server = %d\n%s; want it refused", r.code, r.stderr)
	}
}

// TestServe_TLS: a server with a certificate answers over TLS only; the
// commands in its folder trust the certificate its server file names.
func TestServe_TLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	root := t.TempDir()
	cert, key := selfSigned(t, root)
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n\nA page about ink.\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(s.file.URL, "https://") {
		t.Fatalf("server file URL %s, want https", s.file.URL)
	}
	r := run(t, vault, nil, "search", "ink")
	if r.code != 0 || !strings.Contains(r.stdout, "index.md") {
		t.Errorf("cairn search through the TLS server = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The socket speaks plain HTTP beside TLS: the command went through it,
	// and a second server on the vault is refused.
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		s.viaSocket()
	}
	if r := run(t, vault, nil, "serve", "--addr", "127.0.0.1:0"); r.code == 0 || !strings.Contains(r.stderr, "already serves") {
		t.Errorf("a second cairn serve beside the TLS server = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	resp, err := http.Get(strings.Replace(s.file.URL, "https", "http", 1) + "/healthz")
	if err == nil && resp.StatusCode == 200 {
		t.Errorf("the TLS server answered plain HTTP")
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairn test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

// events follows a server's event stream from after (a Last-Event-ID) and
// sends the ids it reads; the channel closes when the stream ends.
func events(t *testing.T, f *httpapi.ServerFile, after int64) (<-chan int64, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.Token)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("GET /api/v1/events: %v", err)
	}
	ids := make(chan int64, 10000)
	go func() {
		defer close(ids)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				id, _ := strconv.ParseInt(v, 10, 64)
				ids <- id
			}
		}
	}()
	return ids, cancel
}

// TestServe_KillDuringIngest kills the server (kill -9) while its worker
// runs an agent and a client follows the event stream. A new server
// rescues the job and runs it; the client, reconnecting with the last id
// it saw, gets every later event once; every source ends merged once and
// doctor is clean.
func TestServe_KillDuringIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	const slow = `job=$(basename "$(dirname "$PWD")")
echo "working"
sleep 2
printf -- '---\ntitle: Mills '$job'\ntype: concept\n---\n# Mills\n\nSee [[concepts/paper|Paper]].\n' > concepts/mills-$job.md
sed -i 's|- \[\[concepts/ink|- [[concepts/mills-'$job'\|Mills]]\n- [[concepts/ink|' index.md
echo "Wrote a page on mills."`
	_, vault, sources := ingestVault(t, slow)
	s := startServe(t, vault)
	ids, cancel := events(t, s.file, 0)
	defer cancel()
	must(t, run(t, vault, nil, append([]string{"ingest", "--detach"}, sources...)...), "ingest --detach")
	deadline := time.Now().Add(time.Minute)
	for running := false; !running; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no job started within a minute")
		}
		for _, src := range sourcesOf(t, vault) {
			running = running || src.Status == "running"
		}
	}
	if code := s.stop(syscall.SIGKILL); code != -1 {
		t.Fatalf("cairn serve after kill -9 exited %d", code)
	}
	var seen []int64
	for id := range ids {
		seen = append(seen, id)
	}
	if len(seen) == 0 {
		t.Fatal("the event stream sent nothing before the kill")
	}
	last := seen[len(seen)-1]

	s2 := startServe(t, vault)
	resumed, cancel2 := events(t, s2.file, last)
	defer cancel2()
	deadline = time.Now().Add(2 * time.Minute)
	for pending := true; pending; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sources unfinished two minutes after the restart: %+v\n%s", sourcesOf(t, vault), s2.out.String())
		}
		pending = false
		for _, src := range sourcesOf(t, vault) {
			pending = pending || src.Status == "queued" || src.Status == "running"
		}
	}
	var table struct{ Items []struct{ ID int64 } }
	s2.get("/api/v1/events/log?after="+strconv.FormatInt(last, 10)+"&limit=1000", &table)
	want := map[int64]bool{}
	for _, it := range table.Items {
		want[it.ID] = true
	}
	got := map[int64]bool{}
	for len(got) < len(want) {
		select {
		case id, ok := <-resumed:
			if !ok {
				t.Fatal("the resumed stream ended")
			}
			if id <= last || got[id] || !want[id] {
				t.Fatalf("resumed after %d, the stream sent %d (seen: %v)", last, id, got)
			}
			got[id] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("resumed after %d, the stream sent %d of the %d events the table holds", last, len(got), len(want))
		}
	}
	if code := s2.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("the second server exited %d:\n%s", code, s2.out.String())
	}
	accounted(t, vault, sources, "merged")
}

// TestServe_Impostor: after a server is killed (kill -9), its server file
// stays, and another program may take its port. The commands in the
// folder send that program no token (the server proves it holds the
// file's key first) and open the vault themselves; the next server
// revokes the dead one's token.
func TestServe_Impostor(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n\nAbout ink.\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	dead := s.file
	s.stop(syscall.SIGKILL)
	// Where the server had no socket (another system, a path too long for
	// one), its commands go to its address: the socket's own impostor is
	// TestServe_SocketImpostor's.
	os.Remove(dead.Socket)
	nosock := *dead
	nosock.Socket = ""
	if err := httpapi.WriteServerFile(vault, &nosock); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", strings.TrimPrefix(dead.URL, "http://"))
	if err != nil {
		t.Skipf("the dead server's port is taken: %v", err)
	}
	got := make(chan string, 100)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok","proof":"forged","root":"`+vault+`"}`)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	r := run(t, vault, nil, "search", "ink")
	if r.code != 0 || !strings.Contains(r.stdout, "index.md") {
		t.Errorf("cairn search with an impostor on the port = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	close(got)
	for req := range got {
		if strings.Contains(req, "Bearer") || !strings.HasPrefix(req, "GET /healthz") {
			t.Errorf("the impostor got %q; want only the challenge, no token", req)
		}
	}
	srv.Close()
	s2 := startServe(t, vault)
	lr := run(t, vault, nil, "token", "list", "--json")
	var list struct {
		Items []struct {
			ID, State string
		}
	}
	json.Unmarshal([]byte(lr.stdout), &list)
	for _, tok := range list.Items {
		if tok.ID == dead.TokenID && tok.State != "revoked" {
			t.Errorf("the dead server's token %s is %s, want revoked by the next server", tok.ID, tok.State)
		}
		if tok.ID == s2.file.TokenID && tok.State != "active" {
			t.Errorf("the new server's token is %s", tok.State)
		}
	}
}

// TestServe_SocketImpostor: the commands of a vault's folder reach its
// server through the socket in .cairn, and send the token only to a
// process of their own user at its other end. A server killed (kill -9)
// leaves its socket file and server file; a process of another user
// listening at the socket's path gets no request, and the command opens
// the vault itself. The same listener run as the command's own user does
// get the token: the peer's user is what tells them apart.
func TestServe_SocketImpostor(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("runs a listener as another user: needs root on Linux")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n\nAbout ink.\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	if s.file.Socket != filepath.Join(vault, ".cairn", httpapi.SocketName) {
		t.Fatalf("the server file names the socket %q, want the vault's", s.file.Socket)
	}
	// The command goes through the socket: the server audits its request
	// for the working tree (a POST) as one that came from no address.
	r := run(t, vault, nil, "search", "ink")
	if r.code != 0 || !strings.Contains(r.stdout, "index.md") {
		t.Fatalf("cairn search through the server = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s.viaSocket()
	dead := s.file
	s.stop(syscall.SIGKILL)
	if _, err := os.Lstat(dead.Socket); err != nil {
		t.Fatalf("the killed server's socket is gone (%v): the test needs it left", err)
	}
	for _, tc := range []struct {
		uid   int
		token bool
	}{{65534, false}, {0, true}} {
		os.Remove(dead.Socket)
		// The socket is bound by root in the vault's folder (0700), then
		// listened on as tc.uid.
		ls := exec.Command(filepath.Join(filepath.Dir(cairnBin(t)), "cairn-test-listen-as"), dead.Socket, strconv.Itoa(tc.uid))
		out, err := ls.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		ls.Stderr = os.Stderr
		if err := ls.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		if l := <-lines; l != "ready" {
			ls.Process.Kill()
			ls.Wait()
			t.Fatalf("the listener as user %d said %q", tc.uid, l)
		}
		r := run(t, vault, nil, "search", "ink")
		ls.Process.Kill()
		ls.Wait()
		var got []string
		for l := range lines {
			got = append(got, l)
		}
		sent := slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "Bearer "+dead.Token) })
		switch {
		case sent != tc.token:
			t.Errorf("a listener as user %d got %q; want the token sent: %v", tc.uid, got, tc.token)
		case !tc.token && len(got) > 0:
			t.Errorf("a listener as user %d got %q; want no request", tc.uid, got)
		case !tc.token && (r.code != 0 || !strings.Contains(r.stdout, "index.md")):
			t.Errorf("cairn search with another user at the socket = %d\n%s%s, want the vault opened here", r.code, r.stdout, r.stderr)
		}
	}
}

// TestServe_OlderServer: a server of an older cairn, which does not know
// the vault's folder in POST /worktree and refuses the field, still takes
// the commands of its folder: they ask for the vault, then the tree, as
// before. The older server is the real one behind a proxy on the socket
// that renames the field to one no server knows.
func TestServe_OlderServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no socket where the peer's user cannot be checked")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n\nAbout ink.\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	target, err := url.Parse(s.file.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var seen []string
	sock := filepath.Join(vault, ".cairn", "old.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		body = bytes.Replace(body, []byte(`"vault":`), []byte(`"vault_of_a_newer_cairn":`), 1)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.Code))
		mu.Unlock()
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})}
	go srv.Serve(ln)
	defer srv.Close()
	f := *s.file
	f.Socket = sock
	if err := httpapi.WriteServerFile(vault, &f); err != nil {
		t.Fatal(err)
	}
	r := run(t, vault, nil, "search", "ink")
	if r.code != 0 || !strings.Contains(r.stdout, "index.md") {
		t.Fatalf("cairn search through an older server = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"POST /api/v1/worktree 422", "GET /api/v1/vault 200", "POST /api/v1/worktree 200", "GET /api/v1/search 200"}
	if !slices.Equal(seen, want) {
		t.Errorf("the older server got %q, want %q", seen, want)
	}
}

// TestBacklinks_ManyParts: cairn backlinks lists every link into a page
// more than a part of links (app.MaxBacklinks) lead to, reading the vault
// itself and through the server running on it, the same both ways.
func TestBacklinks_ManyParts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	files := map[string]string{"hub.md": "# Hub\n"}
	const n = app.MaxBacklinks + 205
	for i := range n {
		files[fmt.Sprintf("notes/n%04d.md", i)] = "[[hub]]\n"
	}
	writeFiles(t, vault, files)
	must(t, run(t, vault, nil, "init"), "init")
	list := func() []string {
		t.Helper()
		r := run(t, vault, nil, "backlinks", "hub", "--json")
		must(t, r, "backlinks", "hub", "--json")
		var out struct {
			Items []struct {
				From string `json:"from"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("cairn backlinks --json: %v\n%s", err, r.stdout)
		}
		var froms []string
		for _, l := range out.Items {
			froms = append(froms, l.From)
		}
		return froms
	}
	local := list()
	if len(local) != n || !slices.IsSorted(local) || local[n-1] != fmt.Sprintf("notes/n%04d.md", n-1) {
		t.Fatalf("cairn backlinks hub lists %d links, want %d in order", len(local), n)
	}
	startServe(t, vault)
	if served := list(); !slices.Equal(served, local) {
		t.Errorf("through the server, cairn backlinks hub lists %d links, not the %d it lists alone", len(served), len(local))
	}
}
