// Package confine runs an external agent CLI — any command, given a prompt on
// standard input — so that it can read only what it needs and write only
// inside its workspace folder and a private temp and home folder, streams its
// output line by line, enforces a run timeout and an inactivity timeout, and
// stops the agent's whole process tree when the run ends.
//
// # Confinement
//
// On Linux, [Run] never starts the agent itself: it starts Spec.Self (the
// cairn binary) with the environment variable CAIRN_CONFINE set to a JSON
// object naming the readable and writable folders and the command.
// [MaybeExec], called first thing in main, recognises that variable, drops
// every privilege (see Privileges), and, when the kernel offers Landlock
// ([Available] > 0), restricts its own thread with Landlock; then it execs the
// agent from that thread (or, as the init of the run's PID namespace, starts
// it from that thread: see Process tree). The restriction is inherited across
// exec and fork, by every process the agent starts, and cannot be lifted; a
// read or write outside what it allows fails with EACCES (or ENOENT, in the
// folders a namespace hides: see below). The result's Mode is
// [ModeLandlock].
//
// The agent may read, write, create, truncate, rename, link and remove
// (but never make a character or block device) under Spec.Dir (the
// workspace), Spec.Temp and Spec.Home, and read and write /dev/null,
// /dev/zero and /dev/full, but no terminal. It may read and execute, and
// nothing else:
//
//   - the command's own file (symbolic links resolved), wherever it lies;
//   - Spec.Read: the runtime's install folder, folders the settings name;
//   - the system's read-only files: /usr, /bin, /sbin, /lib, /lib32,
//     /lib64, /libx32 and /nix/store; of /etc only what the C library,
//     name lookups, TLS and locales read (ld.so.*, nsswitch.conf, passwd,
//     group, hosts, host.conf, resolv.conf, gai.conf, services, protocols,
//     networks, localtime, timezone, locale.alias, locale.conf,
//     default/locale; of TLS ssl/certs, ssl/cert.pem, ssl/ca-bundle.pem,
//     ssl/openssl.cnf, pki/tls/certs, pki/tls/cert.pem, pki/tls/cacert.pem,
//     pki/tls/openssl.cnf, pki/ca-trust, ca-certificates,
//     ca-certificates.conf and crypto-policies; mime.types, magic,
//     magic.mime, terminfo, os-release), so never shadow, gshadow,
//     sudoers, SSH keys or TLS private keys (ssl/private, pki/tls/private);
//     /dev/random and /dev/urandom; /sys/devices/system/cpu and
//     /sys/kernel/mm/transparent_hugepage; and /proc when it is the
//     agent's own (see Process tree), otherwise only its cpuinfo, meminfo,
//     stat, loadavg, uptime, version, filesystems and sys (the machine's
//     /proc would show every process's environment: Landlock does not
//     guard /proc/<pid>/environ). Entries missing on the machine are left
//     out.
//
// Nothing else is readable: not the user's home, not the folders beside
// the workspace (other workspaces, the vault's database), not /tmp, /run,
// /var or /opt. [CheckReadPaths] (which Spec.Validate applies, and the
// settings may) refuses a Spec.Read entry that is not a clean absolute
// path, that is or holds /etc, /proc, /sys, /dev, /run, /root or /home (so
// /), or that lies in /proc, /sys or /dev. [CheckRead] (which Run applies)
// refuses those, with symbolic links resolved too, and an entry that is
// missing, that holds the user's home (HOME's, and the password
// database's), or that is, lies in or holds a Spec.Deny folder, and a Deny
// folder that lies in a system folder.
//
// Reading files, listing folders and executing are restricted since Landlock
// ABI 1, as are creating, writing and removing; renaming and linking across
// folders from ABI 2 (before, the kernel refuses them outright for a confined
// process), truncating from ABI 3 (before, truncate by path is not restricted,
// but opening for writing is), and from ABI 5 no ioctl on a device the agent
// opened works (the pipes it was given are no devices). From ABI 6 the agent
// can neither signal a process outside the run nor connect to an abstract
// Unix socket made outside it, and from ABI 9 it connects to no Unix socket
// by path but those it made. Landlock's network rules (ABI 4) are not
// used: they name ports, not hosts, and leave UDP open; a network
// namespace does the job (see Network).
//
// Connecting to a Unix socket by path needs no right Landlock restricts
// before ABI 9, so a confined agent in a mount namespace of its own (see
// Process tree) does not find the folders where other programs keep their
// sockets, shared memory and temp files, nor the homes: the wrapper mounts
// an empty tmpfs over /tmp, /var/tmp, /run (and so /var/run and
// /run/user), /dev/shm, /home and /root, and mounts back there, at their
// own paths, only what the read and write sets name (the workspace may lie
// in /tmp, an agent CLI in a home, /etc/resolv.conf may name a file in
// /run). A database's, Docker's, D-Bus's or an SSH agent's socket there is
// out of reach; one elsewhere (under /var/lib, say) is not, until ABI 9.
//
// The agent starts in a session of its own, without a controlling
// terminal, and no terminal is in its read set: it cannot type into the
// terminal of the person who started cairn (TIOCSTI), nor read from it.
//
// Without Landlock (an old kernel, or CAIRN_LANDLOCK=off in the environment)
// the agent runs unconfined and [Run] compares snapshots of the Spec.Watch
// folders taken before and after the run; Result.Outside lists what was
// created, changed or deleted there. The result's Mode is [ModeSnapshot].
// Spec.Seal names folders the agent must not change at all, and
// Result.Sealed lists what changed there; Spec.SealDB names the SQLite
// databases among them that others write meanwhile, whose files must keep
// their identity, whose database file must stay a whole number of pages,
// and whose write-ahead log must stay at least as long as its index says
// (see seal.go). Callers decide whether to run an agent unconfined at all.
//
// # Privileges
//
// The agent holds no capability, whoever runs it, in every mode. The
// wrapper clears its ambient and inheritable capabilities and sets
// no_new_privs, so that set-user-ID programs and file capabilities grant
// nothing; where it holds CAP_SETPCAP (as root, or in a user namespace of
// its own) it also empties the bounding set and locks SECBIT_NOROOT, so
// that not even an execve by root grants a capability. In a namespace (see
// Process tree) the agent has, besides its PID and mount namespaces, a user
// namespace that maps only its own user and group (root's agent too, where
// user namespaces are allowed), and UTS and IPC namespaces of its own: it
// cannot set the machine's host name, nor reach other programs' System V
// IPC objects and POSIX message queues. What a root agent keeps is its
// user id: it is uid 0, the owner of what root owns, so the file
// permission bits let it read and write root's files wherever Landlock does
// not stop it (in snapshot mode, everywhere), and it may signal root's
// processes where it can see them (without namespaces) and Landlock does
// not scope signals (before ABI 6, or in snapshot mode).
//
// # Network
//
// With Spec.Network, the agent's namespaces include a network namespace
// holding only a loopback interface. The wrapper, as its init and before
// it drops its privileges, brings the interface up, adds to it the
// allowed endpoints' IP addresses that are not loopback ones, mounts a
// private /etc/hosts naming the allowed host names (each at a loopback
// address of its own), and listens on each endpoint's address there. It
// hands each connection it accepts to Run over a Unix socket (passing the
// descriptor), and Run connects it to the endpoint outside and copies
// both ways until the run ends; the wrapper's listening goroutines are not
// the agent's thread, which alone is restricted. Nothing else is
// reachable. Without namespaces, Result.Net is NetHost.
//
// # Environment
//
// The agent does not inherit the caller's environment: it gets PATH, LANG,
// LANGUAGE, LC_* and TZ, the variables Spec.Pass names (those unset are left
// out; [CheckVar] says which names may be passed), Spec.Env, HOME (Spec.Home),
// TMPDIR, TMP and TEMP (Spec.Temp), PWD, and the run's marker
// CAIRN_CONFINE_RUN. Spec.Env cannot override what Run sets. Nor does it
// inherit the caller's open files: its standard input, output and error
// are pipes to Run, and the wrapper closes every other descriptor the
// caller held (a shell's `9>>file`) before the agent runs.
//
// # Process tree
//
// Where it may, [Run] starts the agent in a PID namespace and a mount
// namespace of its own (Result.Contain is [ContainNamespace]), with a UTS
// and an IPC namespace, inside a new user namespace that maps only the
// user and group running it; root, where user namespaces are refused,
// makes the others without one. The wrapper is the namespace's init: it
// mounts a /proc of the namespace (so /proc shows only the agent's
// processes, and the agent may read all of it), starts the agent, reaps its
// orphans and passes the signals Run sends it on to every process in the
// namespace. When the agent exits, the rest of the namespace
// gets SIGTERM and Spec.Grace to end; then the init exits, and the kernel
// kills whatever is left. The init is started with PR_SET_PDEATHSIG
// (SIGKILL), so if the process that ran Run dies, even by SIGKILL, the init
// dies with it, and the kernel kills the whole namespace: no process of the
// agent's, however it detached (setsid, double forks, an empty
// environment), outlives the run. When the run is stopped (timeout,
// inactivity, cancellation), the init gets SIGTERM, then SIGKILL after
// Spec.Grace. CAIRN_PIDNS=off in the environment leaves the namespaces out.
//
// Where namespaces are refused (another user without user namespaces, a
// container that forbids them), Run tracks the tree instead
// ([ContainTracking]). The agent starts in its own session and process
// group, and the calling process makes itself a child subreaper so that
// the agent's orphaned descendants are re-parented to it rather than to
// init. While
// the agent runs, Run polls /proc and tracks every process whose parent
// chain leads to the agent, that stays in the agent's process group, or
// that carries the run's marker variable (CAIRN_CONFINE_RUN) in its
// environment — which finds most processes that called setsid or
// double-forked. Each is remembered by pid and start time, so a reused pid
// is never mistaken for one of them. When the run ends for any reason,
// every tracked process still alive gets SIGTERM, then SIGKILL after
// Spec.Grace, and its zombie is reaped. The agent itself dies with the
// process that ran Run (PR_SET_PDEATHSIG), but its descendants do not.
//
// # Limits
//
// Landlock confines the file system, signals and Unix sockets only; the
// network is cut off only with Spec.Network, in a namespace. Before
// ABI 3 the truncate system call is not restricted: an agent can empty a
// file it may not open for writing. Without Spec.Network (or without
// namespaces) nothing stops the agent from reaching the network (a local
// cairn server on a TCP port, which then writes on its behalf); with it, an
// allowed endpoint is reachable by TCP under any name the agent gives it
// (a server with several virtual hosts). Nothing stops it from writing
// through a file that was already hard-linked into the workspace before
// the run. Before ABI 9, a Unix socket by path outside
// the hidden folders stays reachable where its permission bits allow, and
// without namespaces every one does (a Docker or D-Bus socket, which then
// acts on the agent's behalf); before ABI 6, so do abstract sockets, and the
// agent may signal other processes of its user (root's, for a root agent)
// that it can see. Snapshots detect writes only after the fact, only under
// Spec.Watch, and cannot tell the agent's writes from another process's; a
// seal finds changes after the fact too, and neither sees what an
// unconfined agent read, nor a change that keeps a database well-formed.
// Without namespaces, a process that left the agent's process group,
// scrubbed its environment and lost its parent between two polls escapes
// the tracking, and so does every descendant of the agent when the process
// that ran Run is killed. In a namespace, the agent sees the namespace's
// pids, which are the same small numbers in every run (a script's $$ makes
// no unique name).
package confine
