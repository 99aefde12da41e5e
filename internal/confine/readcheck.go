package confine

import (
	"os"
	"path/filepath"
	"strings"

	"cairn"
)

// CheckRead reports, as an error with code EINVALID, whether a read set
// (Spec.Read) would reach what an agent must never read: an entry that is
// missing, that is a deny folder (Spec.Deny), lies in one or holds one, or
// that holds the user's home (a folder inside the home may be named: an
// agent CLI's own install folder often lies there). A deny folder inside
// one of the system's read-only folders is refused too, since Landlock can
// grant a folder but not take part of it back. Paths are compared as given
// and with symbolic links resolved, since Landlock follows links to the
// folder they name. Run checks its spec so; callers may check a setting
// before they have a spec.
func CheckRead(read, deny []string) error {
	var denied []string
	for _, d := range deny {
		denied = append(denied, forms(d)...)
	}
	var home []string
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		home = forms(h)
	}
	for _, r := range read {
		if _, err := os.Stat(r); err != nil {
			return cairn.Errorf(cairn.EINVALID, "agent read folder: %w", err)
		}
		for _, f := range forms(r) {
			for _, d := range denied {
				if within(f, d) || within(d, f) {
					return cairn.Errorf(cairn.EINVALID, "agent read folder %s overlaps %s, which agents must never read", r, d)
				}
			}
			for _, h := range home {
				if within(h, f) {
					return cairn.Errorf(cairn.EINVALID, "agent read folder %s holds the user's home %s", r, h)
				}
			}
		}
	}
	for _, s := range systemRead(true) {
		for _, f := range forms(s) {
			for _, d := range denied {
				if within(d, f) {
					return cairn.Errorf(cairn.EINVALID, "%s lies in %s, which confined agents may read", d, s)
				}
			}
		}
	}
	return nil
}

// forms returns path cleaned and, when it differs, with symbolic links
// resolved.
func forms(path string) []string {
	path = filepath.Clean(path)
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		return []string{path, real}
	}
	return []string{path}
}

// within reports whether path is dir or lies beneath it; both are clean.
func within(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}
