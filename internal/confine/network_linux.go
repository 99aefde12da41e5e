//go:build linux

package confine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ctlFD is the descriptor the wrapper gets the control socket on (the
// first of exec.Cmd.ExtraFiles): over it, the wrapper hands Run each
// connection the agent makes to an allowed endpoint.
const ctlFD = 3

// dialTimeout bounds connecting to an allowed endpoint for the agent.
const dialTimeout = 30 * time.Second

// controlPair returns the two ends of the control socket between Run
// (parent) and the wrapper (child): a Unix socket of packets, so that each
// connection handed over is one message.
func controlPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("make the agent's network control socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "network-control"), os.NewFile(uintptr(fds[1]), "network-control"), nil
}

// setupNet is the wrapper's part of a Network, in the namespace's init
// before it drops its privileges: it brings up the loopback interface,
// adds plan.Local to it, mounts plan.Hosts over /etc/hosts (made on a
// tmpfs mounted for the while over scratch), and listens on
// plan.Listen, handing each connection accepted on Listen[i] to Run over
// the control socket as message i. The listeners run until the init exits.
func setupNet(plan *netPlan, scratch string) error {
	if err := loopbackUp(); err != nil {
		return err
	}
	for _, a := range plan.Local {
		if err := addLoopbackAddr(netip.MustParseAddr(a)); err != nil {
			return err
		}
	}
	if plan.Hosts != "" {
		if err := mountHosts(plan.Hosts, scratch); err != nil {
			return err
		}
	}
	ctl := os.NewFile(ctlFD, "network-control")
	if ctl == nil {
		return errors.New("no network control socket")
	}
	var mu sync.Mutex
	for i, addr := range plan.Listen {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s for the agent: %w", addr, err)
		}
		go handOver(ln.(*net.TCPListener), uint16(i), ctl, &mu)
	}
	return nil
}

// handOver accepts the agent's connections on ln and sends each, with its
// endpoint's number, to Run, then closes its own copy.
func handOver(ln *net.TCPListener, i uint16, ctl *os.File, mu *sync.Mutex) {
	msg := binary.BigEndian.AppendUint16(nil, i)
	for {
		c, err := ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a connection reset before it was accepted
		}
		f, err := c.File()
		c.Close()
		if err != nil {
			continue
		}
		mu.Lock()
		err = unix.Sendmsg(int(ctl.Fd()), msg, unix.UnixRights(int(f.Fd())), nil, 0)
		mu.Unlock()
		f.Close()
		if err != nil {
			return // Run is gone: the run is ending
		}
	}
}

// loopbackUp brings up the namespace's loopback interface, which starts
// down: 127.0.0.0/8 and ::1 come with it.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring up the loopback interface: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring up the loopback interface: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up the loopback interface: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up the loopback interface: %w", err)
	}
	return nil
}

// addLoopbackAddr adds ip, as a host address, to the loopback interface
// (an RTM_NEWADDR request over rtnetlink).
func addLoopbackAddr(ip netip.Addr) error {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return fmt.Errorf("add %s to the loopback interface: %w", ip, err)
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("add %s to the loopback interface: %w", ip, err)
	}
	defer unix.Close(fd)
	family, bits := unix.AF_INET, 32
	if ip.Is6() {
		family, bits = unix.AF_INET6, 128
	}
	raw := ip.AsSlice()
	attr := func(typ uint16, data []byte) []byte {
		b := make([]byte, unix.SizeofRtAttr, unix.SizeofRtAttr+len(data)+3)
		binary.NativeEndian.PutUint16(b[0:], uint16(unix.SizeofRtAttr+len(data)))
		binary.NativeEndian.PutUint16(b[2:], typ)
		b = append(b, data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	body := []byte{byte(family), byte(bits), 0, unix.RT_SCOPE_HOST, 0, 0, 0, 0}
	binary.NativeEndian.PutUint32(body[4:], uint32(lo.Index))
	body = append(body, attr(unix.IFA_LOCAL, raw)...)
	body = append(body, attr(unix.IFA_ADDRESS, raw)...)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWADDR)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("add %s to the loopback interface: %w", ip, err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("add %s to the loopback interface: %w", ip, err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 || msgs[0].Header.Type != unix.NLMSG_ERROR || len(msgs[0].Data) < 4 {
		return fmt.Errorf("add %s to the loopback interface: no acknowledgement", ip)
	}
	if errno := -int32(binary.NativeEndian.Uint32(msgs[0].Data)); errno != 0 {
		return fmt.Errorf("add %s to the loopback interface: %w", ip, syscall.Errno(errno))
	}
	return nil
}

// mountHosts mounts a file holding hosts over /etc/hosts, in the
// namespace's private mounts, read-only to the agent as /etc is. The file
// is made on a tmpfs mounted for the while over scratch (an existing
// folder), which is unmounted again: only the mount on /etc/hosts keeps
// it, and nothing outside the namespace can reach it.
func mountHosts(hosts, scratch string) error {
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=1m,mode=0700"); err != nil {
		return fmt.Errorf("make the agent's /etc/hosts: %w", err)
	}
	defer unix.Unmount(scratch, unix.MNT_DETACH)
	file := filepath.Join(scratch, "hosts")
	if err := os.WriteFile(file, []byte(hosts), 0o644); err != nil {
		return fmt.Errorf("make the agent's /etc/hosts: %w", err)
	}
	if err := unix.Mount(file, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mount the agent's /etc/hosts: %w", err)
	}
	return nil
}

// forwarder is Run's part of a Network: it takes the connections the
// wrapper hands over and connects each to its endpoint.
type forwarder struct {
	ctl    *net.UnixConn
	dial   []string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
}

// forward starts serving the connections the wrapper sends over ctl,
// connection i to dial[i]. It takes ctl.
func forward(ctl *os.File, dial []string) (*forwarder, error) {
	c, err := net.FileConn(ctl)
	ctl.Close()
	if err != nil {
		return nil, fmt.Errorf("serve the agent's network: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &forwarder{ctl: c.(*net.UnixConn), dial: dial, ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{}}
	f.wg.Go(f.loop)
	return f, nil
}

// loop receives connections until the wrapper closes its end.
func (f *forwarder) loop() {
	buf := make([]byte, 2)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := f.ctl.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		var fds []int
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
			fds, _ = unix.ParseUnixRights(&msgs[0])
		}
		if len(fds) != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		file := os.NewFile(uintptr(fds[0]), "agent-connection")
		conn, err := net.FileConn(file)
		file.Close()
		i := int(binary.BigEndian.Uint16(buf))
		if err != nil || n != 2 || i >= len(f.dial) {
			if conn != nil {
				conn.Close()
			}
			continue
		}
		f.wg.Go(func() { f.serve(conn, f.dial[i]) })
	}
}

// serve connects the agent's conn to addr and copies both ways until
// both sides are done or the run ends.
func (f *forwarder) serve(conn net.Conn, addr string) {
	if !f.track(conn) {
		conn.Close()
		return
	}
	defer f.untrack(conn)
	d := net.Dialer{Timeout: dialTimeout}
	out, err := d.DialContext(f.ctx, "tcp", addr)
	if err != nil {
		return // the agent sees its connection closed
	}
	if !f.track(out) {
		out.Close()
		return
	}
	defer f.untrack(out)
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}
	wg.Go(func() { pipe(out, conn) })
	pipe(conn, out)
	wg.Wait()
}

func (f *forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		return false
	}
	f.conns[c] = true
	return true
}

func (f *forwarder) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	c.Close()
}

// close ends the forwarding: the control socket and every connection.
func (f *forwarder) close() {
	f.cancel()
	f.ctl.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
}
