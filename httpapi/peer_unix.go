//go:build linux || darwin

package httpapi

import (
	"errors"
	"net"
)

// peerChecked says that this system tells who runs the process at a Unix
// socket's other end (peerUIDOf).
const peerChecked = true

// peerUID returns the user the process at the other end of the Unix
// socket conn runs as.
func peerUID(conn net.Conn) (int, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var uid int
	var uerr error
	if err := raw.Control(func(fd uintptr) { uid, uerr = peerUIDOf(int(fd)) }); err != nil {
		return 0, err
	}
	return uid, uerr
}
