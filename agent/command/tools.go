package command

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"cairn/agent"
)

// RelayTokenEnv is the variable that gives "cairn mcp --relay" the token
// a run's tool server asks for.
const RelayTokenEnv = "CAIRN_RELAY_TOKEN"

// relayHello bounds how long a connection to a run's tool server may take
// to present its token.
const relayHello = 5 * time.Second

// serveTools serves cairn's MCP tools on a view of w.Dir for the run of
// t, on a loopback port only the run knows the token of, and sets
// w.Tools to the stdio server that reaches it: "cairn mcp --relay ADDR",
// which the agent's CLI starts inside the agent's confinement (where
// cairn's own folder cannot be read, so the tools cannot be served
// there) and which copies its stdio to the port. stop closes the port
// and waits for the connections to end.
func (c *Runtime) serveTools(ctx context.Context, w *Workspace, t *agent.Task) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve the agent's tools: %w", err)
	}
	key := make([]byte, 24)
	rand.Read(key)
	token := hex.EncodeToString(key)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return // closed by stop
			}
			wg.Go(func() {
				defer conn.Close()
				stopConn := context.AfterFunc(ctx, func() { conn.Close() })
				defer stopConn()
				r, ok := hello(conn, token)
				if !ok {
					return
				}
				err := c.Tools(ctx, relayConn{Reader: r, Conn: conn}, t.Base, w.Dir, w.snap)
				if err != nil && ctx.Err() == nil {
					c.logger().Debug("command agent: tool server", "job", t.Job, "err", err)
				}
			})
		}
	})
	w.tools = ln.Addr().String()
	w.Tools = &StdioServer{
		Name:    c.toolsName(),
		Command: c.Program,
		Args:    []string{"mcp", "--relay", ln.Addr().String()},
		Env:     map[string]string{RelayTokenEnv: token},
	}
	return func() {
		cancel()
		ln.Close()
		wg.Wait()
	}, nil
}

// toolsName is the MCP server's name for the agent.
func (c *Runtime) toolsName() string {
	if c.ToolsName != "" {
		return c.ToolsName
	}
	return "cairn"
}

// hello reads the token a connection must start with, on a line of its
// own, and reports whether it is the run's.
func hello(conn net.Conn, token string) (*bufio.Reader, bool) {
	conn.SetReadDeadline(time.Now().Add(relayHello))
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, false
	}
	conn.SetReadDeadline(time.Time{})
	got := strings.TrimSuffix(line, "\n")
	return r, subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// relayConn is a connection whose first bytes were read into a buffer.
type relayConn struct {
	io.Reader
	net.Conn
}

func (c relayConn) Read(p []byte) (int, error) { return c.Reader.Read(p) }

// Relay copies stdin to the tool server at addr and its answers to
// stdout, after presenting token: what "cairn mcp --relay" does. It
// returns when the server closes the connection, or stdin ends and the
// server has answered everything.
func Relay(ctx context.Context, addr, token string, stdin io.Reader, stdout io.Writer) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("reach the agent's tool server: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := io.WriteString(conn, token+"\n"); err != nil {
		return fmt.Errorf("reach the agent's tool server: %w", err)
	}
	go func() {
		io.Copy(conn, stdin)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	if _, err := io.Copy(stdout, conn); err != nil && ctx.Err() == nil {
		return fmt.Errorf("relay the agent's tool server: %w", err)
	}
	return nil
}
