package confine

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"cairn"
)

// wholeFolders are the system's folders that a read set may name a part
// of, but not as a whole (nor a folder holding one): /etc holds shadow and
// keys, /run and the homes other programs' secrets and sockets, /proc,
// /sys and /dev the machine's processes, kernel and devices.
func wholeFolders() []string {
	return []string{"/etc", "/proc", "/sys", "/dev", "/run", "/root", "/home"}
}

// kernelFolders are the folders of the kernel's and the devices' files,
// none of which a read set may name: an agent reads the few it needs
// already (see systemRead), and the rest are other processes' memory and
// environment, the kernel's settings and raw disks.
func kernelFolders() []string {
	return []string{"/proc", "/sys", "/dev"}
}

// readHint is the hint of an error about a read set's shape.
const readHint = "Name only the folder the agent needs, like /opt/agent: the system's programs and libraries, and what programs need of /etc, /proc, /sys and /dev, are readable already."

// CheckReadPaths reports, as an error with code EINVALID and a hint, the
// first entry of a read set (Spec.Read, the setting agent.read) that has
// the wrong shape: that is not a clean absolute path; that is or holds
// /etc, /proc, /sys, /dev, /run, /root or /home (so never /); or that lies
// in /proc, /sys or /dev. It does not look at the file system: [CheckRead]
// applies the same rules to the paths with symbolic links resolved, and
// checks what needs the file system.
func CheckReadPaths(read []string) error {
	for _, r := range read {
		if !filepath.IsAbs(r) || filepath.Clean(r) != r {
			return cairn.Errorf(cairn.EINVALID, "agent read folder %q is not a clean absolute path", r).
				WithHint("Name it in full, like /opt/agent.")
		}
		if err := checkReadPath(r, r); err != nil {
			return err
		}
	}
	return nil
}

// checkReadPath applies the rules of CheckReadPaths for folders to path, a
// clean absolute form of the read set's entry r.
func checkReadPath(r, path string) error {
	for _, w := range wholeFolders() {
		if within(w, path) {
			return cairn.Errorf(cairn.EINVALID, "agent read folder %s holds %s, which agents must not read whole", r, w).WithHint(readHint)
		}
	}
	for _, k := range kernelFolders() {
		if within(path, k) {
			return cairn.Errorf(cairn.EINVALID, "agent read folder %s lies in %s, whose files are the kernel's and the devices'", r, k).WithHint(readHint)
		}
	}
	return nil
}

// CheckRead reports, as an error with code EINVALID, whether a read set
// (Spec.Read) would reach what an agent must never read: an entry of the
// wrong shape ([CheckReadPaths]), one that is missing, that is a deny
// folder (Spec.Deny), lies in one or holds one, or that holds the user's
// home (a folder inside the home may be named: an agent CLI's own install
// folder often lies there). The home is the one HOME names and the one the
// password database names, when they differ or HOME is unset. A deny
// folder inside one of the system's read-only folders is refused too,
// since Landlock can grant a folder but not take part of it back. Paths
// are compared as given and with symbolic links resolved, since Landlock
// follows links to the folder they name. Run checks its spec so; callers
// may check a setting before they have a spec.
func CheckRead(read, deny []string) error {
	if err := CheckReadPaths(read); err != nil {
		return err
	}
	var denied []string
	for _, d := range deny {
		denied = append(denied, forms(d)...)
	}
	var home []string
	for _, h := range homes() {
		home = append(home, forms(h)...)
	}
	for _, r := range read {
		if _, err := os.Stat(r); err != nil {
			return cairn.Errorf(cairn.EINVALID, "agent read folder: %w", err)
		}
		for _, f := range forms(r) {
			if err := checkReadPath(r, f); err != nil {
				return err
			}
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

// homes returns the user's home as HOME names it and as the password
// database does, each once: without HOME, the database's still counts.
func homes() []string {
	var out []string
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		out = append(out, filepath.Clean(h))
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" && !slices.Contains(out, filepath.Clean(u.HomeDir)) {
		out = append(out, filepath.Clean(u.HomeDir))
	}
	return out
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
