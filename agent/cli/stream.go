package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"cairn/agent"
	"cairn/agent/command"
)

// maxEventLine is the longest line of an agent CLI's output read as an
// event: an event carrying a whole page it wrote can be long. Longer lines
// come in pieces, which are not JSON, and are shown as text.
const maxEventLine = 16 << 20

// Bounds on what activity shows of a tool call's argument and a message.
const (
	toolArgBytes = 300
	sayBytes     = 1000
)

// stream is what the three CLIs' parsers share: the run's activity, the
// tail of the output, and the agent's last message.
type stream struct {
	task  *agent.Task
	dir   string // the workspace, to make file paths relative
	tr    agent.Transcript
	last  string // the agent's last message
	final string // its final message, whole, when its CLI gave one
	bad   int    // lines of standard output that were not events
	shown int    // of which shown as text
	stop  func() // stops the run (command.Workspace.Stop)
	// refused is why the provider refused the key, which the CLIs retry
	// for minutes: the run is stopped at the first refusal.
	refused string
}

func newStream(t *agent.Task, w *command.Workspace) *stream {
	return &stream{task: t, dir: w.Dir, stop: w.Stop}
}

// refuse stops the run because the provider refused the key: what is a
// retry for the CLI is the end for the job.
func (s *stream) refuse(what string) {
	if s.refused != "" {
		return
	}
	s.refused = "the model provider refused the key (" + agent.Cut(agent.Clean(what, 300), 300) + "): check agent.key_env and agent.base_url"
	if s.stop != nil {
		s.stop()
	}
}

// refusal is the failure of a run stopped by refuse, or nil.
func (s *stream) refusal() *agent.Failure {
	if s.refused == "" {
		return nil
	}
	return &agent.Failure{Reason: "agent", Message: s.refused}
}

// maxBadShown bounds how many lines of standard output that are not
// events are shown as activity.
const maxBadShown = 20

// decode reads one line as an event of type E: standard output that is
// JSON. Anything else — standard error, garbage, a cut piece of a long
// line — is kept for the tail, and shown as text within bounds.
func decode[E any](s *stream, streamName, line string) (*E, bool) {
	if streamName != "stdout" {
		s.tr.Line("stderr", agent.Cut(line, 4<<10)) // the tail only: the summary is the result's
		if strings.TrimSpace(line) != "" && s.shown < maxBadShown {
			s.shown++
			s.activity("text", line)
		}
		return nil, false
	}
	var ev E
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		s.tr.Line("stderr", agent.Cut(line, 4<<10))
		s.bad++
		if strings.TrimSpace(line) != "" && s.shown < maxBadShown {
			s.shown++
			s.activity("text", agent.Cut(line, sayBytes))
		}
		return nil, false
	}
	return &ev, true
}

func (s *stream) activity(kind, text string) {
	if s.task.Activity != nil && strings.TrimSpace(text) != "" {
		s.task.Activity(kind, text)
	}
}

// say is a message of the agent's.
func (s *stream) say(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	s.last = text
	s.activity("text", agent.Cut(text, sayBytes))
}

// file is a file the agent wrote or edited: shown relative to the
// workspace when it is in it.
func (s *stream) file(path string) {
	if path == "" {
		return
	}
	if filepath.IsAbs(path) {
		if rel, err := filepath.Rel(s.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
	}
	s.activity("file", filepath.ToSlash(path))
}

// tool is a tool call, with its argument cut short.
func (s *stream) tool(name string, input json.RawMessage) {
	// Paths in the workspace are shown relative to it, as files are.
	arg := strings.ReplaceAll(strings.TrimSpace(string(input)), s.dir+"/", "")
	if arg == "" || arg == "{}" || arg == "null" {
		s.activity("tool", name)
		return
	}
	s.activity("tool", name+" "+agent.Cut(arg, toolArgBytes))
}

// Final returns the agent's final message as it gave it.
func (s *stream) Final() string { return s.final }

// Tail returns the end of the output that was not events: what the CLI
// printed on standard error, and lines that were not JSON. Events are in
// the activity already.
func (s *stream) Tail() string { return s.tr.Tail() }

// summary returns the agent's summary from its final message: the block
// between <summary> and </summary> it was asked for, else its last
// paragraph (agent.Transcript's rules).
func (s *stream) summary(final string) string {
	if strings.TrimSpace(final) == "" {
		final = s.last
	}
	s.final = final
	var tr agent.Transcript
	for _, line := range strings.Split(final, "\n") {
		tr.Line("stdout", line)
	}
	return tr.Summary()
}

// noResult is how a run ends whose CLI printed no result: a failure
// saying so when it exited 0 (a non-zero exit says enough).
func (s *stream) noResult(exitCode int) (string, *agent.Usage, *agent.Failure) {
	if exitCode != 0 {
		return "", nil, nil
	}
	msg := "the agent's CLI exited without its final result event"
	if s.bad > 0 {
		msg += fmt.Sprintf(" (%d lines of its output were not events)", s.bad)
	}
	return "", nil, &agent.Failure{Reason: "agent", Message: msg}
}
