package confine_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRun_NonRoot runs the containment, stop, read and environment tests
// again as an ordinary user (nobody), for whom a PID namespace takes a user
// namespace of its own. It runs only as root, which can switch users.
func TestRun_NonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the tests as another user")
	}
	if os.Getenv("CONFINE_TEST_NONROOT") != "" {
		t.Skip("running as the other user already")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A folder that user can reach, for the test binary and its temp
	// folders.
	dir, err := os.MkdirTemp("/tmp", "confine-nonroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "confine.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.v", "-test.count=1",
		"-test.run", "^(TestRun_Contain|TestRun_ContainKilled|TestRun_Privileges|TestRun_Terminal|TestRun_InheritedFiles|TestRun_Sockets|TestRun_Signals|TestRun_Stop|TestRun_LandlockRead|TestRun_Env)$")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=/nonexistent", "CONFINE_TEST_NONROOT=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "not in PID namespaces") {
		t.Skipf("an ordinary user cannot make namespaces here:\n%s", out)
	}
	if err != nil || strings.Contains(string(out), "--- SKIP: TestRun_Contain ") || strings.Contains(string(out), "--- SKIP: TestRun_Privileges/landlock/Namespace ") {
		t.Errorf("the tests as nobody: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
