//go:build linux

package confine

// The read set: besides its workspace, temp and home folders (which it may
// also write) and Spec.Read, a confined agent may read and execute only
// these. Missing entries are left out.

// systemRead returns the system's read-only files and folders: programs
// and libraries; the configuration that the C library, name lookups, TLS
// and locales read (not /etc as a whole: it holds shadow, gshadow, sudoers,
// SSH host keys, TLS private keys and the credentials of services); the kernel's views of
// the machine that programs read as a matter of course; and the random
// devices.
//
// /proc as a whole is in the set only when it is the agent's own
// (procMounted: a proc file system of the agent's PID namespace, showing
// only its processes); otherwise only the files about the machine are,
// since the process folders would show every process's environment:
// Landlock does not guard /proc/<pid>/environ.
func systemRead(procMounted bool) []string {
	paths := []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix/store",
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
		"/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
		"/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf",
		"/etc/services", "/etc/protocols", "/etc/networks",
		"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
		// Of TLS, the certificates and the configuration, where the
		// distributions keep them, and not the private keys beside them
		// (/etc/ssl/private, /etc/pki/tls/private).
		"/etc/ssl/certs", "/etc/ssl/cert.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/openssl.cnf",
		"/etc/pki/tls/certs", "/etc/pki/tls/cert.pem", "/etc/pki/tls/cacert.pem", "/etc/pki/tls/openssl.cnf",
		"/etc/pki/ca-trust", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/crypto-policies",
		"/etc/mime.types", "/etc/magic", "/etc/magic.mime", "/etc/terminfo", "/etc/os-release",
		"/sys/devices/system/cpu", "/sys/kernel/mm/transparent_hugepage",
		"/dev/random", "/dev/urandom",
	}
	if procMounted {
		return append(paths, "/proc")
	}
	return append(paths,
		"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime",
		"/proc/version", "/proc/filesystems", "/proc/sys",
	)
}

// devices returns the device files that programs write to as a matter of
// course: a confined agent may read and write them (deviceRights). No
// terminal is among them: /dev/tty, /dev/ptmx and /dev/pts would let the
// agent reach the terminal of the person who started cairn, or make
// terminals whose ioctls Landlock refuses anyway (see handledRights).
func devices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full"}
}
