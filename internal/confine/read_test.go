package confine_test

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/internal/confine"
)

// readHelper reads the start of each path (a folder is listed) and prints
// "ok <path>", "EACCES <path>", "ENOENT <path>" or "error <path>: <err>".
func readHelper(paths []string) int {
	for _, p := range paths {
		var err error
		if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
			_, err = os.ReadDir(p)
		} else if f, oerr := os.Open(p); oerr != nil {
			err = oerr
		} else {
			_, err = f.Read(make([]byte, 512))
			f.Close()
		}
		switch {
		case err == nil:
			fmt.Println("ok", p)
		case errors.Is(err, syscall.EACCES):
			fmt.Println("EACCES", p)
		case errors.Is(err, syscall.ENOENT):
			fmt.Println("ENOENT", p)
		default:
			fmt.Printf("error %s: %v\n", p, err)
		}
	}
	return 0
}

// TestRun_LandlockRead checks the read set: a confined agent runs ordinary
// programs (sh, cat, sed, a Go binary) and reads its workspace, its temp
// folder and the system's read-only files, but not /etc/shadow, a file in
// the user's home, a folder beside its workspace (another workspace, the
// vault's database) nor the environment of the process that started it. In
// a PID namespace, /proc is the agent's own: it reads its processes' files
// there, and other processes' are not there at all.
func TestRun_LandlockRead(t *testing.T) {
	landlock(t)
	spec := setup(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	secret := filepath.Join(home, "secret.txt")
	other := filepath.Join(filepath.Dir(spec.Dir), "other-workspace")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(other, "page.md")
	for _, p := range []string{secret, beside, filepath.Join(spec.Dir, "in.md"), filepath.Join(spec.Temp, "tmp.txt")} {
		if err := os.WriteFile(p, []byte("text\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		filepath.Join(spec.Dir, "in.md"), filepath.Join(spec.Temp, "tmp.txt"), spec.Dir,
		"/etc/passwd", "/etc/hosts", "/usr/bin/sh", "/dev/urandom",
	}
	refused := []string{
		"/etc/shadow", secret, home, beside, other, filepath.Dir(spec.Dir), "/root",
	}
	environ := "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"
	out := output{}
	spec.Output = out.record
	spec.Env = []string{
		"SELF=" + self,
		"READS=" + strings.Join(append(append(append([]string{}, allowed...), refused...), "/proc/self/status", environ), string(filepath.ListSeparator)),
	}
	// Ordinary programs, then the test binary reading each path.
	body := `set -e
echo hello | sed 's/hello/hi/' | cat > greeting.txt
test "$(cat greeting.txt)" = hi
ls -d /usr/lib > /dev/null
echo programs ok
CONFINE_TEST_READ="$READS" "$SELF"
`
	if err := os.WriteFile(filepath.Join(spec.Dir, "agent.sh"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	spec.Argv = []string{"sh", "agent.sh"}
	spec.Read = []string{self}
	res := run(t, t.Context(), spec)

	want := []string{"programs ok"}
	for _, p := range allowed {
		want = append(want, "ok "+p)
	}
	for _, p := range refused {
		want = append(want, "denied "+p)
	}
	if res.Contain == confine.ContainNamespace {
		want = append(want, "ok /proc/self/status", "denied "+environ)
	} else {
		want = append(want, "denied /proc/self/status", "denied "+environ)
	}
	if diff := cmp.Diff(want, denied(out["stdout"])); diff != "" || res.ExitCode != 0 {
		t.Errorf("Run() exit %d; reads (-want +got):\n%s\nstderr: %q", res.ExitCode, diff, out["stderr"])
	}
}

// TestRun_ErrRead checks that a read set reaching what an agent must never
// read is refused before anything runs.
func TestRun_ErrRead(t *testing.T) {
	spec := setup(t)
	root := filepath.Dir(spec.Dir)
	home := filepath.Join(root, "home")
	vault := filepath.Join(root, "vault")
	db := filepath.Join(vault, ".cairn")
	tool := filepath.Join(home, ".local", "tool")
	for _, dir := range []string{tool, db} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(root, "etc")
	if err := os.Symlink("/etc", etc); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	spec.Deny = []string{db}
	spec.Argv = []string{"sh", "-c", "echo ran > ran.txt"}
	for _, tt := range []struct {
		name string
		read string
	}{
		{"Home", home},
		{"HoldsHome", root},
		{"Denied", db},
		{"InDenied", filepath.Join(db, "..", ".cairn")},
		{"HoldsDenied", vault},
		{"LinkToDenied", link},
		{"Missing", filepath.Join(root, "missing")},
		{"Root", "/"},
		{"Etc", "/etc"},
		{"Dev", "/dev"},
		{"InProc", "/proc/self"},
		{"LinkToEtc", etc},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := spec
			spec.Read = []string{tt.read}
			if res, err := confine.Run(t.Context(), spec); cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("Run() reading %s = %+v, %v; want code %s", tt.read, res, err, cairn.EINVALID)
			}
			if _, err := os.Stat(filepath.Join(spec.Dir, "ran.txt")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the agent ran: Stat(ran.txt) = %v", err)
			}
		})
	}
	t.Run("InHome", func(t *testing.T) {
		spec := spec
		spec.Read = []string{tool}
		if res, err := confine.Run(t.Context(), spec); err != nil || res.ExitCode != 0 {
			t.Errorf("Run() reading %s = %+v, %v; want exit 0", tool, res, err)
		}
	})
}

func init() { agents["tls"] = tlsAgent }

// tlsAgent loads the system's certificate pool, as a TLS client does, and
// prints how many certificates it holds.
func tlsAgent() int {
	pool, err := x509.SystemCertPool()
	if err != nil {
		fmt.Println("certificates", err)
		return 1
	}
	// On Linux the pool is made of the files read, so its subjects are
	// theirs.
	fmt.Println("certificates", len(pool.Subjects()) > 0)
	return 0
}

// TestRun_LandlockTLS checks that of the TLS configuration a confined agent
// reads the public part (certificates, the OpenSSL configuration) and not
// the private keys beside it: /etc/ssl/private, and Red Hat's
// /etc/pki/tls/private, where the machine has them.
func TestRun_LandlockTLS(t *testing.T) {
	landlock(t)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	var allowed, refused []string
	for _, p := range []string{"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs", "/etc/pki/ca-trust"} {
		if exists(p) {
			allowed = append(allowed, p)
		}
	}
	for _, p := range []string{"/etc/ssl/private", "/etc/ssl/private/ssl-cert-snakeoil.key", "/etc/pki/tls/private"} {
		if exists(p) {
			refused = append(refused, p)
		}
	}
	if len(refused) == 0 {
		t.Skip("no private TLS keys on this machine")
	}
	spec := setup(t)
	out := output{}
	spec.Output = out.record
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec.Argv = []string{self}
	spec.Read = []string{self}
	spec.Env = []string{"CONFINE_TEST_READ=" + strings.Join(append(append([]string{}, allowed...), refused...), string(filepath.ListSeparator))}
	res := run(t, t.Context(), spec)

	var want []string
	for _, p := range allowed {
		want = append(want, "ok "+p)
	}
	for _, p := range refused {
		want = append(want, "denied "+p)
	}
	if diff := cmp.Diff(want, denied(out["stdout"])); diff != "" || res.ExitCode != 0 {
		t.Errorf("Run() exit %d; reads (-want +got):\n%s\nstderr: %q", res.ExitCode, diff, out["stderr"])
	}

	if len(allowed) > 0 {
		spec := setup(t)
		out := output{}
		spec.Output = out.record
		helper(t, &spec, "tls")
		if res := run(t, t.Context(), spec); res.ExitCode != 0 || !slices.Equal(out["stdout"], []string{"certificates true"}) {
			t.Errorf("Run() exit %d, output %q; want the system's certificates loaded", res.ExitCode, out)
		}
	}
}

// TestCheckReadPaths checks the shape rules for a read set: clean absolute
// paths that are not, nor hold, a folder of the system's that agents must
// not read whole, nor lie among the kernel's and the devices' files. Each
// refusal has a hint.
func TestCheckReadPaths(t *testing.T) {
	for _, p := range []string{
		"", "opt/agent", "/opt/../etc", "/opt/agent/", "//opt",
		"/", "/etc", "/proc", "/sys", "/dev", "/run", "/root", "/home",
		"/proc/1", "/proc/self/environ", "/sys/kernel", "/dev/sda", "/dev/shm",
	} {
		err := confine.CheckReadPaths([]string{"/opt/agent", p})
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("CheckReadPaths(%q) = %v, want %s with a hint", p, err, cairn.EINVALID)
		}
	}
	ok := []string{"/opt/agent", "/usr/local/share/agent", "/etc/agent", "/home/me/.local/share/agent", "/root/.local/bin/agent", "/run/current-system/sw"}
	if err := confine.CheckReadPaths(ok); err != nil {
		t.Errorf("CheckReadPaths(%q) = %v, want nil", ok, err)
	}
}
