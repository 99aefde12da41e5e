package confine

// Environment variables and arguments that make up the wrapper protocol.
const (
	// envWrapper, when set, makes MaybeExec act as the wrapper. Its value
	// is a wrapperSpec as JSON.
	envWrapper = "CAIRN_CONFINE"
	// envMarker carries a value unique to one run into the agent and all
	// its descendants, so that they can be found after a setsid.
	envMarker = "CAIRN_CONFINE_RUN"
	// envSwitch=off makes Available report no Landlock.
	envSwitch = "CAIRN_LANDLOCK"
	// envPidns=off makes Run track the process tree instead of starting
	// the agent in a PID namespace.
	envPidns = "CAIRN_PIDNS"
	// wrapperFlag is the wrapper's only argument. A Self that does not
	// call MaybeExec fails on it instead of running as itself.
	wrapperFlag = "-cairn-confine-wrapper"
)

// Exit codes of a wrapper that could not exec the agent, as a shell's.
const (
	exitCannotExec = 126 // confinement failed, or the command is not executable
	exitNotFound   = 127 // the command does not exist
)

// wrapperSpec is what Run tells the wrapper through CAIRN_CONFINE.
type wrapperSpec struct {
	Landlock bool     `json:"landlock"` // restrict the agent with Landlock to Read and Write
	Read     []string `json:"read"`     // files and folders beyond the system's that may be read and executed
	Write    []string `json:"write"`    // folders (or files) where reading and writing stay allowed
	Dir      string   `json:"dir"`      // the workspace, the agent's working folder
	Path     string   `json:"path"`     // the absolute path of the command to exec
	Argv     []string `json:"argv"`     // its arguments, argv[0] included
	// Init: the wrapper is the init of a new PID and mount namespace; it
	// mounts the namespace's /proc (and with Landlock hides other
	// programs' folders: see hide), starts the agent, reaps orphans,
	// forwards signals, and exits with the agent's status once the rest
	// of the namespace has stopped or GraceMS has passed.
	Init    bool  `json:"init"`
	GraceMS int64 `json:"grace_ms"`
	// Net, with Init, is the network of the namespace: only loopback, on
	// which the wrapper listens for the allowed endpoints and hands the
	// connections to Run over the control socket (descriptor ctlFD).
	Net *netPlan `json:"net,omitempty"`
}

// Landlock file-system rights, as in <linux/landlock.h>.
