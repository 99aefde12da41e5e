package confine

import (
	"context"
	"syscall"
)

// RunWithoutUserNamespace is Run without the containment in a user
// namespace: the way root's agent runs where user namespaces are refused.
func RunWithoutUserNamespace(ctx context.Context, spec Spec) (*Result, error) {
	var ways []containment
	for _, c := range containments() {
		if c.attr.Cloneflags&syscall.CLONE_NEWUSER == 0 {
			ways = append(ways, c)
		}
	}
	return run(ctx, spec, ways)
}
