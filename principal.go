package cairn

import (
	"context"
	"strings"
)

// Principal names who acts: "user:<name>", "agent:<runtime>", "job:<id>" or
// "system". Every commit records one.
type Principal string

// PrincipalSystem is cairn itself (bootstrap, ingest bookkeeping, log entries).
const PrincipalSystem Principal = "system"

// Principal kinds, as returned by [Principal.Kind].
const (
	PrincipalUser  = "user"
	PrincipalAgent = "agent"
	PrincipalJob   = "job"
	PrincipalSys   = "system"
)

// User returns the principal "user:<name>".
func User(name string) Principal { return Principal("user:" + name) }

// Agent returns the principal "agent:<runtime>".
func Agent(runtime string) Principal { return Principal("agent:" + runtime) }

// Job returns the principal "job:<id>".
func Job(id string) Principal { return Principal("job:" + id) }

// ParsePrincipal checks s and returns it as a Principal. The name after the
// colon is 1–128 bytes of letters, digits and . _ @ + - characters.
func ParsePrincipal(s string) (Principal, error) {
	p := Principal(s)
	if err := p.Validate(); err != nil {
		return "", err
	}
	return p, nil
}

// Kind returns "user", "agent", "job" or "system"; "" when p is malformed.
func (p Principal) Kind() string {
	if p == PrincipalSystem {
		return PrincipalSys
	}
	kind, _, ok := strings.Cut(string(p), ":")
	if !ok {
		return ""
	}
	switch kind {
	case PrincipalUser, PrincipalAgent, PrincipalJob:
		return kind
	}
	return ""
}

// Name returns the part after the colon ("" for system).
func (p Principal) Name() string {
	_, name, _ := strings.Cut(string(p), ":")
	return name
}

// Validate reports whether p is well formed.
func (p Principal) Validate() error {
	if p == PrincipalSystem {
		return nil
	}
	kind, name, ok := strings.Cut(string(p), ":")
	hint := "A principal is user:<name>, agent:<runtime>, job:<id> or system."
	if !ok || (kind != PrincipalUser && kind != PrincipalAgent && kind != PrincipalJob) {
		return Errorf(EINVALID, "principal %q: unknown kind", string(p)).WithHint(hint)
	}
	if name == "" || len(name) > 128 {
		return Errorf(EINVALID, "principal %q: name must be 1 to 128 bytes", string(p)).WithHint(hint)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@+-", r)) {
			return Errorf(EINVALID, "principal %q: character %q is not allowed in a name", string(p), r).WithHint(hint)
		}
	}
	return nil
}

type contextKey int

const principalKey contextKey = iota

// NewContextWithPrincipal returns a copy of ctx that carries p.
func NewContextWithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey, p)
}

// PrincipalFromContext returns the principal carried by ctx, or "" if none.
func PrincipalFromContext(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey).(Principal)
	return p
}
