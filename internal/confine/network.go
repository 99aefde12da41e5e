package confine

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"cairn"
)

// Network asks that the agent reach nothing but the endpoints it allows.
// Run starts the agent in a network namespace of its own, with only a
// loopback interface, where the wrapper listens on each allowed endpoint's
// address and hands every connection it accepts to Run, which connects it
// to the endpoint itself, outside: the agent's TLS goes through untouched,
// and whatever else it dials — another host, a port of this machine, a
// DNS server — is unreachable. A host name resolves, inside, to a
// loopback address of its own, through a private /etc/hosts (a program
// that asks a DNS server itself finds none); an IP address is added to
// the loopback interface, so it connects as given.
//
// Without namespaces (Result.Contain is ContainTracking, and on systems
// other than Linux) the network cannot be cut off: Result.Net says so.
type Network struct {
	// Allow are the endpoints the agent may connect to over TCP, as
	// "host:port" (an IPv6 address in brackets): a model provider's API,
	// a local tool server.
	Allow []string
}

// NetMode says what network a run's agent had.
type NetMode string

const (
	NetIsolated NetMode = "isolated" // a network namespace of its own: only Network.Allow was reachable
	NetHost     NetMode = "host"     // the machine's network: no Network asked, or no namespaces
)

// maxAllow bounds Network.Allow: each endpoint is a listener in the
// wrapper and, for a host name, a loopback address of its own.
const maxAllow = 200

// CheckAllow reports, as an error with code EINVALID and a hint, the first
// entry of allow that is not an endpoint an agent may be allowed: a host
// name or IP address (not a wildcard one) and a port from 1 to 65535.
func CheckAllow(allow []string) error {
	if len(allow) > maxAllow {
		return cairn.Errorf(cairn.EINVALID, "%d endpoints allowed to the agent; at most %d", len(allow), maxAllow).
			WithHint("Allow the few hosts the agent needs.")
	}
	for _, a := range allow {
		if _, _, err := endpoint(a); err != nil {
			return cairn.Errorf(cairn.EINVALID, "agent endpoint %q: %v", a, err).
				WithHint("Name a host and a port, like api.example.com:443, 127.0.0.1:8080 or [::1]:8080.")
		}
	}
	return nil
}

// endpoint splits a "host:port" entry of Network.Allow: the host is an IP
// address (ip valid) or a lower-cased host name.
func endpoint(a string) (host string, ip netip.Addr, err error) {
	h, p, err := net.SplitHostPort(a)
	if err != nil {
		return "", ip, fmt.Errorf("not host:port")
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return "", ip, fmt.Errorf("port %q is not from 1 to 65535", p)
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		if addr.Zone() != "" || addr.IsUnspecified() || addr.IsMulticast() {
			return "", ip, fmt.Errorf("%s is not the address of one host", h)
		}
		return "", addr.Unmap(), nil
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if !hostName(h) {
		return "", ip, fmt.Errorf("%q is not a host name", h)
	}
	return h, ip, nil
}

// hostName reports whether h is a DNS host name: dot-separated labels of
// letters, digits and hyphens, none starting or ending with a hyphen.
func hostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

// netPlan is what the wrapper sets up in the agent's network namespace.
type netPlan struct {
	// Listen are the addresses the wrapper listens on; a connection to
	// Listen[i] goes to Dial[i], which Run dials outside.
	Listen []string `json:"listen"`
	Dial   []string `json:"-"`
	// Local are the IP addresses (not loopback ones) added to the
	// loopback interface, so that the agent's connections to them stay
	// inside.
	Local []string `json:"local,omitempty"`
	// Hosts, when not "", is mounted over /etc/hosts: the allowed host
	// names, each at a loopback address of its own.
	Hosts string `json:"hosts,omitempty"`
}

// planNetwork returns what the wrapper must set up for n.
func planNetwork(n *Network) (*netPlan, error) {
	if err := CheckAllow(n.Allow); err != nil {
		return nil, err
	}
	plan := &netPlan{}
	names := map[string]netip.Addr{} // host name → its loopback address inside
	var order []string
	next := netip.AddrFrom4([4]byte{127, 0, 0, 2})
	for _, a := range n.Allow {
		host, ip, _ := endpoint(a)
		_, port, _ := net.SplitHostPort(a)
		dial := net.JoinHostPort(cmp.Or(host, ip.String()), port)
		if host != "" {
			addr, ok := names[host]
			if !ok {
				addr, names[host] = next, next
				order = append(order, host)
				next = next.Next()
			}
			ip = addr
		} else if !ip.IsLoopback() && !slices.Contains(plan.Local, ip.String()) {
			plan.Local = append(plan.Local, ip.String())
		}
		listen := net.JoinHostPort(ip.String(), port)
		if slices.Contains(plan.Listen, listen) {
			continue
		}
		plan.Listen = append(plan.Listen, listen)
		plan.Dial = append(plan.Dial, dial)
	}
	if len(order) > 0 {
		var b strings.Builder
		b.WriteString("# cairn: the hosts this agent may reach\n")
		if names["localhost"] == (netip.Addr{}) {
			b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
		}
		for _, h := range order {
			fmt.Fprintf(&b, "%s\t%s\n", names[h], h)
		}
		plan.Hosts = b.String()
	}
	return plan, nil
}
