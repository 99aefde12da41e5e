//go:build linux

package confine

// We do not use Go-Landlock (github.com/landlock-lsm/go-landlock) because
// its syscall package, which every other package of it imports, links
// libcap's psx: with cgo enabled, psx wraps pthread_create in the whole
// cairn binary. The wrapper needs only three raw system calls on one
// thread right before exec, which golang.org/x/sys/unix provides.

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// readRights are the rights to read files, list folders and execute
	// programs (Landlock ABI 1).
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR
	// writeRightsV1 are the write rights of Landlock ABI 1: everything but
	// executing and reading files and listing folders.
	writeRightsV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// neverGranted are the handled rights no rule grants: making character
	// and block devices (a device the agent made would reach the
	// machine's hardware and kernel, whatever its folder), and ioctl on
	// devices (on a terminal, TIOCSTI types into it), and connecting to
	// Unix sockets by path (a database's, Docker's, D-Bus's).
	neverGranted = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV |
		unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	// deviceRights are the rights on the device files of devices():
	// reading, writing, and opening with O_TRUNC (as a shell's > does).
	deviceRights = unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// fileRights are the rights among those handled that a rule on a
	// single file, rather than a folder, may carry.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE
)

// handledRights returns the rights that Landlock ABI abi can refuse and
// that the confinement handles: reading, listing and executing, and the
// write rights of ABI 1 (of which making devices is granted nowhere), with
// renaming and linking across folders from ABI 2, truncating from ABI 3,
// ioctl on devices from ABI 5 (granted nowhere: no ioctl works on a device
// the agent opens by path; the pipes it was given are no devices), and
// connecting to Unix sockets by path from ABI 9 (granted nowhere: the
// agent reaches only the sockets it made itself). The network (ABI 4)
// stays allowed; signals and abstract sockets (6) are scopes (see scopes).
func handledRights(abi int) uint64 {
	if abi < 1 {
		return 0
	}
	rights := uint64(readRights | writeRightsV1)
	if abi >= 2 {
		rights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		rights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		rights |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		rights |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return rights
}

// scopes returns what Landlock ABI abi can scope and the confinement
// scopes: from ABI 6, the agent can neither signal a process outside the
// run, nor connect to an abstract Unix socket made outside it.
func scopes(abi int) uint64 {
	if abi < 6 {
		return 0
	}
	return unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
}

// Available returns the Landlock ABI version the kernel offers, 0 for none.
// The environment variable CAIRN_LANDLOCK=off makes it return 0 (tests of the
// fallback, and an escape hatch).
func Available() int {
	if os.Getenv(envSwitch) == "off" {
		return 0
	}
	return kernelABI()
}

// kernelABI asks the kernel for its Landlock ABI version.
func kernelABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// rulesetAttr is struct landlock_ruleset_attr up to its scopes (ABI 6).
// Before ABI 6 only its first field is passed, which every ABI accepts.
type rulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64 // unused: the network is not restricted
	scoped           uint64
}

// restrictThread makes the current thread unable, for good, to read
// anything but the read set (readable, the system's files and the devices)
// and to write anything but under writable and the devices. procMounted
// says that /proc is the agent's own (see systemRead).
func restrictThread(readable, writable []string, procMounted bool) error {
	abi := kernelABI()
	rights := handledRights(abi)
	if rights == 0 {
		return errors.New("the kernel offers no Landlock")
	}
	attr := rulesetAttr{handledAccessFS: rights, scoped: scopes(abi)}
	size := unsafe.Offsetof(attr.handledAccessNet)
	if attr.scoped != 0 {
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("create ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	write := rights &^ neverGranted
	for _, path := range writable {
		if err := allow(ruleset, path, write); err != nil {
			return fmt.Errorf("allow writes under %s: %w", path, err)
		}
	}
	for _, path := range readable {
		if err := allow(ruleset, path, readRights); err != nil {
			return fmt.Errorf("allow reads under %s: %w", path, err)
		}
	}
	// Those missing on this machine are left out.
	for _, path := range systemRead(procMounted) {
		if err := allow(ruleset, path, readRights); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("allow reads under %s: %w", path, err)
		}
	}
	for _, path := range devices() {
		if err := allow(ruleset, path, rights&deviceRights); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("allow writes to %s: %w", path, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("restrict self: %w", errno)
	}
	return nil
}

// allow adds to ruleset a rule granting rights beneath path; on a file
// rather than a folder, only the rights that apply to files.
func allow(ruleset int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("add rule: %w", errno)
	}
	return nil
}
