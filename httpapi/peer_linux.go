package httpapi

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// peerChecked says that this system tells who runs the process at a Unix
// socket's other end (SO_PEERCRED).
const peerChecked = true

// maxSocketPath is the longest path a Unix socket can have here.
const maxSocketPath = 107

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
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return int(cred.Uid), nil
}
