//go:build !linux && !darwin

package httpapi

import (
	"errors"
	"net"
)

// peerChecked says that this system cannot tell cairn who runs the
// process at a Unix socket's other end: a server makes no socket, and a
// command proves its server through its address.
const peerChecked = false

// maxSocketPath is the longest path a Unix socket can have here.
const maxSocketPath = 0

func peerUID(net.Conn) (int, error) { return 0, errors.ErrUnsupported }
