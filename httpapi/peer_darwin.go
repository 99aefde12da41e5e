package httpapi

import "golang.org/x/sys/unix"

// maxSocketPath is the longest path a Unix socket can have here.
const maxSocketPath = 103

// peerUIDOf returns the user of the process at the other end of the Unix
// socket fd (LOCAL_PEERCRED).
func peerUIDOf(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
