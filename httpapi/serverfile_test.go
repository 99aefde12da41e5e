package httpapi_test

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"cairn"
	"cairn/httpapi"
)

// TestListenLocal: the vault's socket is its owner's alone; a socket a
// process still listens on is not taken over, one left by a dead server
// is; and a server that stops removes its socket only while it is its
// own.
func TestListenLocal(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no socket where the peer's user cannot be checked")
	}
	// A short root: a socket's path has at most 103 or 107 bytes.
	root, err := os.MkdirTemp("", "ll")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	if err := os.Mkdir(filepath.Join(root, ".cairn"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".cairn", httpapi.SocketName)

	a, err := httpapi.ListenLocal(root)
	if err != nil || a == nil {
		t.Fatalf("ListenLocal = %v, %v", a, err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket is %v (%v), want mode 0600", fi.Mode(), err)
	}
	// A live socket is refused, and left as it was.
	if b, err := httpapi.ListenLocal(root); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Fatalf("ListenLocal beside a live socket = %v, %v; want a conflict", b, err)
	}
	if err := answers(path); err != nil {
		t.Fatalf("the first socket no longer answers: %v", err)
	}
	// Its file removed under it (by hand), another server makes its own;
	// the first, stopping, leaves it.
	os.Remove(path)
	b, err := httpapi.ListenLocal(root)
	if err != nil || b == nil {
		t.Fatalf("ListenLocal after the socket was removed = %v, %v", b, err)
	}
	a.Close()
	if err := answers(path); err != nil {
		t.Fatalf("the first server's stop removed the second's socket: %v", err)
	}
	b.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after its server stopped: %v", err)
	}
	// A server that stops closes its listener twice (its HTTP server's
	// shutdown, then its own): a socket made between the two, which may
	// take the freed inode, stays.
	a, err = httpapi.ListenLocal(root)
	if err != nil || a == nil {
		t.Fatalf("ListenLocal = %v, %v", a, err)
	}
	a.Close()
	b, err = httpapi.ListenLocal(root)
	if err != nil || b == nil {
		t.Fatalf("ListenLocal after a close = %v, %v", b, err)
	}
	a.Close()
	if err := answers(path); err != nil {
		t.Fatalf("the first server's second close removed the next one's socket: %v", err)
	}
	b.Close()
	// A live socket too busy to take a connection (its queue full) is
	// not taken for a dead one.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	for range 3 { // fill the queue; a connection it has no room for fails
		if c, err := net.DialTimeout("unix", path, 100*time.Millisecond); err == nil {
			defer c.Close()
		}
	}
	if d, err := httpapi.ListenLocal(root); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Fatalf("ListenLocal beside a busy socket = %v, %v; want a conflict", d, err)
	}
	syscall.Close(fd)
	os.Remove(path)
	// A socket left by a server that died (its file, nobody listening) is
	// replaced; something else at the path is not.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	c, err := httpapi.ListenLocal(root)
	if err != nil || c == nil {
		t.Fatalf("ListenLocal over a dead socket = %v, %v", c, err)
	}
	c.Close()
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, err := httpapi.ListenLocal(root); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Errorf("ListenLocal over a regular file = %v, %v; want a conflict", d, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "x" {
		t.Errorf("the file at the socket's path was changed")
	}
}

// answers dials the socket at path: nil when something answers there.
func answers(path string) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	return c.Close()
}
