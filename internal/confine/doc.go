// Package confine runs an external agent CLI — any command, given a prompt on
// standard input — so that it can write only inside its workspace folder and
// a private temp folder, streams its output line by line, enforces a run
// timeout and an inactivity timeout, and stops the agent's whole process tree
// when the run ends.
//
// # Confinement
//
// When the kernel offers Landlock ([Available] > 0), [Run] does not start the
// agent itself: it starts Spec.Self (the cairn binary) with the environment
// variable CAIRN_CONFINE set to a JSON object naming the writable folders and
// the command. [MaybeExec], called first thing in main, recognises that
// variable, restricts its own thread with Landlock (reading and executing
// stay allowed everywhere; creating, writing, truncating, renaming, linking
// and removing are allowed only under the workspace, the temp folder and a
// few device files such as /dev/null) and execs the agent from that thread.
// The restriction is inherited across exec and by every process the agent
// starts, and cannot be lifted; a write elsewhere fails with EACCES. The
// result's Mode is [ModeLandlock].
//
// Without Landlock (an old kernel, or CAIRN_LANDLOCK=off in the environment)
// the agent runs unconfined and [Run] compares snapshots of the Spec.Watch
// folders taken before and after the run; Result.Outside lists what was
// created, changed or deleted there. The result's Mode is [ModeSnapshot].
//
// # Process tree
//
// The agent starts in its own process group, and the calling process makes
// itself a child subreaper so that the agent's orphaned descendants are
// re-parented to it rather than to init. While the agent runs, [Run] polls
// /proc and tracks every process whose parent chain leads to the agent, that
// stays in the agent's process group, or that carries the run's marker
// variable (CAIRN_CONFINE_RUN) in its environment — which finds processes
// that called setsid or double-forked. Each is remembered by pid and start
// time, so a reused pid is never mistaken for one of them. When the run ends
// for any reason, every tracked process still alive gets SIGTERM, then
// SIGKILL after Spec.Grace, and its zombie is reaped.
//
// # Limits
//
// Landlock confines the file system only. It does not stop the agent from
// reaching the network, from talking to other processes over sockets (a
// local cairn server, a Docker or D-Bus socket) which then write on its
// behalf, from signalling other processes of the same user, or from writing
// through a file that was already hard-linked into the workspace before the
// run. Snapshots detect writes only after the fact, only under Spec.Watch,
// and cannot tell the agent's writes from another process's. A process that
// left the agent's process group, scrubbed its environment and lost its
// parent between two polls escapes the tracking.
package confine
