package httpapi

import "golang.org/x/sys/unix"

// maxSocketPath is the longest path a Unix socket can have here.
const maxSocketPath = 107

// peerUIDOf returns the user of the process at the other end of the Unix
// socket fd (SO_PEERCRED).
func peerUIDOf(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
