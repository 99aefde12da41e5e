package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"cairn"
)

// ServerFileName is the file, in a vault's .cairn folder, by which cairn
// serve tells the commands run in the vault's folder where it is and
// gives them a token for the vault's owner.
const ServerFileName = "server.json"

// ServerFile is what a running server writes in its vault's .cairn folder
// (mode 0600: it holds a token with every scope).
type ServerFile struct {
	// URL is where the server answers: http://127.0.0.1:7420.
	URL string `json:"url"`
	// Token is the secret of the owner's token, made when the server
	// started and revoked when it stops; TokenID names it.
	Token   string `json:"token"`
	TokenID string `json:"token_id"`
	// Cert is the server's TLS certificate file, for a client to trust
	// (none without TLS).
	Cert string `json:"cert,omitempty"`
	// Key is a secret the server proves it holds (GET /healthz with a
	// challenge) before a client sends it the token: whatever listens at
	// URL after the server died gets nothing.
	Key string `json:"key"`
	// Socket is the Unix socket in the vault's .cairn folder on which
	// the server also answers, when it has one (SocketName): a command
	// of the vault's folder goes through it, and checks that the process
	// at its other end is its own user's instead of asking for the proof.
	Socket string `json:"socket,omitempty"`
	// Root is the vault's folder as the server opened it.
	Root    string    `json:"root"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// SocketName is the Unix socket, in a vault's .cairn folder, on which
// cairn serve also answers the commands of its own user.
const SocketName = "server.sock"

// ServerFilePath returns where the server file of the vault in folder
// root is.
func ServerFilePath(root string) string {
	return filepath.Join(root, ".cairn", ServerFileName)
}

// WriteServerFile writes f as the server file of the vault in root, whole
// or not at all, readable only by its owner.
func WriteServerFile(root string, f *ServerFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	path := ServerFilePath(root)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".server-*.json")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadServerFile reads the server file of the vault in root: ENOTFOUND
// when there is none. A file another user owns, or that others may read
// or write, is refused (EFORBIDDEN): it could send this user's commands
// to a server of someone else's.
func ReadServerFile(root string) (*ServerFile, error) {
	path := ServerFilePath(root)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "no server runs on the vault at %s", root)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 || !fi.Mode().IsRegular() {
		return nil, cairn.Errorf(cairn.EFORBIDDEN, "%s is not this user's alone (mode %v): it is not used", path, fi.Mode()).
			WithHint("Remove it; cairn serve writes it anew, readable only by the user who runs it.")
	}
	var f ServerFile
	if err := json.NewDecoder(fh).Decode(&f); err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "%s does not parse: %v", path, err).WithHint("Remove it; cairn serve writes it anew.")
	}
	return &f, nil
}

// RemoveServerFile removes the server file of the vault in root if it is
// still the one of the token tokenID (a server that starts after this one
// keeps its own).
func RemoveServerFile(root, tokenID string) error {
	f, err := ReadServerFile(root)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil
		}
		return err
	}
	if f.TokenID != tokenID {
		return nil
	}
	return os.Remove(ServerFilePath(root))
}

// Client returns a client of the server f describes, with its token, and
// whether the server is proven to be this user's. Through the server's
// socket (Socket), each connection is checked to have a process of this
// user at its other end, which proves it. Otherwise the client goes to
// URL, trusting the server's certificate when it has one, and Verify with
// f.Key must succeed before a request sends the token.
func (f *ServerFile) Client() (c *Client, proven bool, err error) {
	if f.Socket != "" && peerChecked {
		// The socket speaks plain HTTP, also beside a server with TLS:
		// nobody but this user's processes is on it.
		u, err := url.Parse(f.URL)
		if err != nil {
			return nil, false, cairn.Errorf(cairn.EINVALID, "the server file's address %q does not parse", f.URL)
		}
		u.Scheme = "http"
		if c, err = NewClient(u.String(), f.Token); err != nil {
			return nil, false, err
		}
		c.SetTransport(socketTransport(f.Socket))
		return c, true, nil
	}
	if c, err = NewClient(f.URL, f.Token); err != nil {
		return nil, false, err
	}
	if f.Cert != "" {
		tr, err := TrustTransport(f.Cert)
		if err != nil {
			return nil, false, err
		}
		c.SetTransport(tr)
	}
	return c, false, nil
}

// ListenLocal listens on the Unix socket of the vault in root
// (SocketName), for the commands of the vault's folder; the socket is made
// readable and writable by its owner only. It returns no listener, and no
// error, where the process at a socket's other end cannot be checked
// (peerChecked) or where the socket's path is too long for one. A socket
// left by a server that died (nothing answers: the connection is refused)
// is replaced; any other socket or file there is not (ECONFLICT). Closing
// the listener removes the socket's file first, while it is still its
// own, then stops listening: a server that stops never removes a socket
// another server made after it.
func ListenLocal(root string) (net.Listener, error) {
	path := filepath.Join(root, ".cairn", SocketName)
	if !peerChecked || len(path) > maxSocketPath {
		return nil, nil
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, cairn.Errorf(cairn.ECONFLICT, "%s is there and is not a socket", path).
				WithHint("Remove it: cairn serve makes its socket there.")
		}
		conn, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			// Answering, or busy (its queue full), or not this user's.
			return nil, cairn.Errorf(cairn.ECONFLICT, "a process listens on %s", path).
				WithHint("Another cairn serve listens there (one of the folder this vault was moved from, say); stop it to use the socket.")
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the socket a server left: %w", err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	fi, err := os.Lstat(path)
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return &localListener{UnixListener: ln, path: path, made: fi}, nil
}

// localListener is the listener of a vault's socket.
type localListener struct {
	*net.UnixListener
	path   string
	made   fs.FileInfo // the socket's file as it was made
	remove sync.Once
}

// Close removes the socket's file, unless another server's socket has
// replaced it, and stops listening. The file is looked at while the
// socket is still open, so that its inode cannot have gone to a new
// socket; closing again removes nothing.
func (l *localListener) Close() error {
	l.remove.Do(func() {
		if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.made) {
			os.Remove(l.path)
		}
	})
	return l.UnixListener.Close()
}

// socketTransport returns an HTTP transport that connects to the Unix
// socket at path, whatever the request's address, and uses a connection
// only when the process at its other end runs as this user.
func socketTransport(path string) http.RoundTripper {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, err
			}
			uid, err := peerUID(conn)
			if err == nil && uid != os.Getuid() {
				err = fmt.Errorf("the process at %s runs as user %d, not as this user (%d)", path, uid, os.Getuid())
			}
			if err != nil {
				conn.Close()
				return nil, err
			}
			return conn, nil
		},
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
}

// TrustTransport returns an HTTP transport that trusts the certificates of
// the PEM file certFile beside the system's.
func TrustTransport(certFile string) (http.RoundTripper, error) {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("read the server's certificate: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, cairn.Errorf(cairn.EINVALID, "%s holds no PEM certificate", certFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr, nil
}

// NewProofKey returns a new secret for a server to prove it holds: 32
// random bytes in hex.
func NewProofKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make the server's key: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// proof is what a server holding key answers to challenge.
func proof(key, challenge string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(challenge))
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks that the server the client talks to holds key (the server
// file's): it asks /healthz to answer a random challenge, and only then
// may the client send the token. A server that does not prove it is
// EUNAVAILABLE: it is not the one that wrote the file.
func (c *Client) Verify(ctx context.Context, key string) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	challenge := hex.EncodeToString(b[:])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/healthz?challenge="+challenge, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return cairn.Errorf(cairn.EUNAVAILABLE, "the server at %s does not answer: %w", c.base, err)
	}
	defer resp.Body.Close()
	var out struct {
		Proof string `json:"proof"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&out)
	if !hmac.Equal([]byte(out.Proof), []byte(proof(key, challenge))) {
		return cairn.Errorf(cairn.EUNAVAILABLE, "what answers at %s is not the server that wrote the server file", c.base).
			WithHint("The server may have stopped and another program taken its port; the file is not used.")
	}
	return nil
}
