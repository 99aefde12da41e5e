package ingest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"cairn"
	"cairn/admit"
	"cairn/agent"
	"cairn/durable"
	"cairn/store"
	"cairn/vault"
)

// worker runs ingest jobs.
type worker struct {
	river.WorkerDefaults[Args]
	s *Service
}

// Timeout leaves the agent's own timeout (from the policy) in charge.
func (w *worker) Timeout(*river.Job[Args]) time.Duration { return -1 }

// Work integrates one source: the vault's agent makes a proposal on main's
// head, and admission decides; the job's completion and the source's
// status commit with the decision. An agent's own failure (non-zero exit,
// timeout, nothing changed) fails the source and is not retried; an
// infrastructure error is retried up to the policy's attempts.
func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	s := w.s
	src, err := s.getSource(ctx, nil, job.Args.Source)
	if err != nil {
		return err
	}
	if src == nil || !takes(src, job) {
		return notMine(src, job) // checked again when it is taken
	}
	head, err := s.v.Store.Head(ctx, admit.Branch)
	if err != nil {
		return err
	}
	pol, polErr := s.policy(ctx)
	rt, rterr := s.runtime(ctx, pol, head)
	if polErr != nil {
		// Not the default agent in its place: the vault names its own.
		rterr = cairn.Errorf(cairn.EINVALID, "%w", polErr).
			WithHint("Fix cairn.yaml on main (cairn settings lists the settings), then cairn sources retry " + src.ID)
	}
	err = s.v.Store.Update(ctx, func(tx *store.Tx) error {
		// Take the source only when it is this job's to run: queued under
		// it, or running under an earlier attempt of it (a dead worker's,
		// or one that failed and is retried).
		cur, err := s.getSource(ctx, tx, src.ID)
		if err != nil {
			return err
		}
		if cur == nil || !takes(cur, job) {
			src = cur
			return errNotMine
		}
		if rterr != nil {
			// The vault's agent may not run here: the attempt that would
			// take the source fails it instead.
			return s.failTx(ctx, tx, src.ID, job, rterr.Error(), cairn.ErrorHint(rterr))
		}
		mode := modeOf(rt)
		if err := s.setStatus(ctx, tx, src.ID, StatusChange{
			Step: Step{Time: s.now(), Status: Running, Principal: cairn.Job(fmt.Sprint(job.ID)),
				Detail: fmt.Sprintf("attempt %d by %s, agent %s", job.Attempt, workerOf(job), rt.Name())},
			Job: job.ID, Attempt: int64(job.Attempt),
		}); err != nil {
			return err
		}
		return s.v.Admit.Event(ctx, tx, s.now(), "ingest.running", src.ID, map[string]any{"job": job.ID, "attempt": job.Attempt, "agent": rt.Name(), "mode": mode})
	})
	if errors.Is(err, errNotMine) {
		return notMine(src, job)
	}
	if err != nil {
		return err
	}
	if rterr != nil {
		s.point("ingest:failed")
		return river.JobCancel(rterr)
	}
	src.Status, src.Job, src.Attempt = Running, job.ID, int64(job.Attempt)
	s.point("ingest:running")
	data, err := s.readRaw(ctx, head, src.Path)
	if err != nil {
		return s.infra(ctx, src, job, err)
	}
	// A source that is not Markdown or text (HTML, PDF) is integrated as the
	// Markdown it converts to; one that does not convert fails.
	text, converted, err := s.conv.Source(ctx, src.Path, data)
	if cairn.ErrorCode(err) == cairn.EINVALID {
		return s.fail(ctx, src, job, err.Error(), cairn.ErrorHint(err))
	}
	if err != nil {
		return s.infra(ctx, src, job, err)
	}
	task := &agent.Task{
		Job: job.ID, Attempt: int64(job.Attempt), Source: agent.SourceDoc{Path: src.Path, Data: text, Converted: converted},
		Base: head, Date: s.now().Format("2006-01-02"),
	}
	activity := s.newActivityLog(src, job.ID, job.Attempt)
	task.Activity = activity.add
	res, err := rt.Run(ctx, task)
	// What the agent did is recorded before what became of it.
	activity.close(context.WithoutCancel(ctx))
	if err != nil {
		if f, ok := agent.IsFailure(err); ok {
			hint := "cairn jobs retry " + fmt.Sprint(job.ID) + " tries again."
			msg := f.Message
			if f.Output != "" {
				msg += "; its last output: " + lastLines(f.Output, 5)
			}
			return s.fail(ctx, src, job, msg, hint)
		}
		if ctx.Err() != nil {
			// Cancelled (cairn jobs cancel, or the worker stopping): a
			// cancelled job's source is failed by the cancel itself; a
			// stopping worker's job is rescued and runs again.
			return ctx.Err()
		}
		return s.infra(ctx, src, job, err)
	}
	s.point("ingest:proposed")
	skipped := make([]admit.Skipped, 0, len(res.Skipped))
	for _, sk := range res.Skipped {
		skipped = append(skipped, admit.Skipped{Path: sk.Path, Reason: sk.Reason})
	}
	summary := strings.TrimSpace(res.Summary)
	if summary == "" {
		summary = fmt.Sprintf("The %s agent integrated %s (it gave no summary).", rt.Name(), src.Path)
	}
	out, err := s.v.Admit.Submit(ctx, admit.Request{
		Key:   fmt.Sprintf("ingest:%s:%d:%d", src.ID, job.ID, job.Attempt),
		Route: "ingest", Base: head, Tree: res.Tree, Batch: res.Batch,
		Principal: cairn.Agent(rt.Name()),
		Message:   fmt.Sprintf("ingest: %s — %s", src.Name, headline(summary)),
		Meta:      agentMeta(res),
		Summary:   summary, Log: &cairn.LogEntry{Op: "ingest", Subject: src.Name, Body: summary},
		Outside: res.Outside, Skipped: skipped, Source: src.ID, Job: job.ID,
		Within: func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error {
			// Only the attempt that is running decides: a worker taken for
			// dead whose job ran again must not decide twice.
			cur, err := s.getSource(ctx, tx, src.ID)
			if err != nil {
				return err
			}
			if !runs(cur, job) {
				return errStale
			}
			if err := durable.CompleteTx(ctx, tx.Backend(), job); err != nil {
				return err
			}
			s.point("ingest:deciding")
			return nil
		},
	})
	switch {
	case errors.Is(err, errStale):
		return nil
	case errors.Is(err, admit.ErrEmpty):
		return s.fail(ctx, src, job, "the agent's change is on main already: nothing to admit", "")
	case err != nil:
		return s.infra(ctx, src, job, err)
	}
	s.point("ingest:decided")
	if out.Admitted() {
		s.syncSoon(ctx)
	}
	return nil
}

// errNotMine rolls back a job's taking of a source that is not its to run.
var errNotMine = errors.New("the source is not this job's to run")

// takes reports whether a job attempt may take a source: it is queued
// under the job, or running under an earlier attempt of it.
func takes(src *Source, job *river.Job[Args]) bool {
	if src.Job != job.ID {
		return false
	}
	return src.Status == Queued || src.Status == Running && src.Attempt < int64(job.Attempt)
}

// runs reports whether a job attempt is the one running a source: the
// source is running under that job and attempt. Only that attempt may
// decide or fail it; an earlier one, whose worker was taken for dead and
// whose job runs again, leaves it alone.
func runs(src *Source, job *river.Job[Args]) bool {
	return src != nil && src.Status == Running && src.Job == job.ID && src.Attempt == int64(job.Attempt)
}

// notMine ends a job whose source it may not take: a replay of a decided
// source's own job has nothing to do; any other job is cancelled, and the
// source is left as it is.
func notMine(src *Source, job *river.Job[Args]) error {
	switch {
	case src == nil:
		return river.JobCancel(fmt.Errorf("source %.12s is not recorded", job.Args.Source))
	case src.Job == job.ID && (src.Status == Merged || src.Status == Held || src.Status == Rejected):
		return nil
	case src.Job == job.ID && src.Status == Failed:
		return river.JobCancel(fmt.Errorf("source %s failed: %s", src.Name, src.Error))
	}
	return river.JobCancel(fmt.Errorf("source %s is %s under job %d (attempt %d); job %d attempt %d leaves it alone",
		src.Name, src.Status, src.Job, src.Attempt, job.ID, job.Attempt))
}

// fail marks the source failed with the agent's error and ends the job
// without retrying it. Only the attempt running the source (runs) fails
// it: a stale attempt's failure changes nothing.
func (s *Service) fail(ctx context.Context, src *Source, job *river.Job[Args], msg, hint string) error {
	err := s.v.Store.Update(ctx, func(tx *store.Tx) error {
		cur, err := s.getSource(ctx, tx, src.ID)
		if err != nil || !runs(cur, job) {
			return err
		}
		return s.failTx(ctx, tx, src.ID, job, msg, hint)
	})
	if err != nil {
		return err
	}
	s.point("ingest:failed")
	return river.JobCancel(errors.New(msg))
}

// failTx marks a source failed by a job in tx, with the error and hint,
// and records the event, which carries both (cairn ingest prints them as
// it happens).
func (s *Service) failTx(ctx context.Context, tx *store.Tx, id string, job *river.Job[Args], msg, hint string) error {
	if err := s.setStatus(ctx, tx, id, StatusChange{
		Step:  Step{Time: s.now(), Status: Failed, Principal: cairn.Job(fmt.Sprint(job.ID)), Detail: msg},
		Error: msg, Hint: hint,
	}); err != nil {
		return err
	}
	return s.v.Admit.Event(ctx, tx, s.now(), "ingest.failed", id, map[string]any{"job": job.ID, "error": msg, "hint": hint})
}

// infra handles an infrastructure error: River retries the job with
// backoff; after the last attempt the source is failed.
func (s *Service) infra(ctx context.Context, src *Source, job *river.Job[Args], cause error) error {
	s.log.Warn("ingest job", "job", job.ID, "attempt", job.Attempt, "err", cause)
	if job.Attempt < job.MaxAttempts {
		return cause
	}
	msg := fmt.Sprintf("failed %d times; last: %v", job.Attempt, cause)
	return s.fail(ctx, src, job, msg, "cairn jobs retry "+fmt.Sprint(job.ID)+" tries again.")
}

// runtime returns the agent runtime the policy names, built by its
// registered factory (package agent) from what the service holds, or an
// error with a hint when it may not run: an unknown runtime, or one whose
// agent may not run here (a bad agent.read, say, or a command agent where
// it would run unconfined and agent.unconfined does not allow that).
func (s *Service) runtime(ctx context.Context, pol *admit.Policy, head cairn.Hash) (agent.Runtime, error) {
	dir := filepath.Join(s.v.Root, vault.DirName)
	db := filepath.Join(dir, vault.DBName)
	if s.v.PG != nil {
		db = "" // no file: the database is elsewhere
	}
	set := pol.AgentSettings()
	if eva, ok, err := s.eva(ctx, head); err != nil {
		return nil, err
	} else if ok {
		set = eva.Apply(set, pol.Agent.Runtime != "")
	}
	return agent.New(agent.Env{
		Settings: set,
		Store:    s.v.Store, Index: s.v.Index,
		Root: s.v.Root, Internal: dir, Database: db,
		Verify:  s.v.Check,
		Environ: s.env,
		Folder:  &s.folder,
		Crash:   s.crash,
		Logger:  s.log,
		Tools:   s.tools,
		Program: s.program,
		Drafts:  s.drafts,
		Background: func(work func()) {
			s.background.Go(work)
		},
	})
}

// eva reads the settings of an Eva vault's EVA.md on the commit head;
// ok is false when the vault has none.
func (s *Service) eva(ctx context.Context, head cairn.Hash) (agent.Eva, bool, error) {
	c, err := s.v.Store.ReadCommit(ctx, head)
	if err != nil {
		return agent.Eva{}, false, err
	}
	e, err := s.v.Store.Get(ctx, c.Tree, agent.EvaFile)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return agent.Eva{}, false, nil
	}
	if err != nil {
		return agent.Eva{}, false, err
	}
	data, err := s.v.Store.ReadBlob(ctx, e.Blob)
	if err != nil {
		return agent.Eva{}, false, err
	}
	return agent.ParseEva(data), true, nil
}

func (s *Service) readRaw(ctx context.Context, head cairn.Hash, path string) ([]byte, error) {
	c, err := s.v.Store.ReadCommit(ctx, head)
	if err != nil {
		return nil, err
	}
	e, err := s.v.Store.Get(ctx, c.Tree, path)
	if err != nil {
		return nil, fmt.Errorf("read source %s: %w", path, err)
	}
	return s.v.Store.ReadBlob(ctx, e.Blob)
}

func workerOf(job *river.Job[Args]) string {
	if n := len(job.AttemptedBy); n > 0 {
		return job.AttemptedBy[n-1]
	}
	return "a worker"
}

// headline is the first line of a summary (an agent's is one line of clean
// text already), at most 72 characters.
func headline(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if r := []rune(line); len(r) > 72 {
		line = string(r[:71]) + "…"
	}
	return line
}

// lastLines returns the last n lines of an agent's output that hold
// something printable, each as clean text of at most 200 bytes, joined by
// " / ": the end of its output, for a failure's message.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range slices.Backward(strings.Split(s, "\n")) {
		if len(lines) == n {
			break
		}
		if l = agent.Clean(l, 200); l != "" {
			lines = append(lines, l)
		}
	}
	slices.Reverse(lines)
	return strings.Join(lines, " / ")
}

// modeOf says how a runtime's agent is confined (agent.Confined): "" for
// one that writes only through cairn, like the extractive agent.
func modeOf(rt agent.Runtime) string {
	if c, ok := rt.(agent.Confined); ok {
		return c.Confinement()
	}
	return ""
}

// agentMeta is what the commit of an agent's proposal records about the
// run: how the agent worked (agent.mode), for a command agent how its
// process tree was contained (agent.contain) and what network it had
// (agent.net), and for an agent CLI its
// version and the turns, tokens and cost it reported.
func agentMeta(res *agent.Result) map[string]string {
	meta := map[string]string{"agent.mode": res.Mode}
	if res.Contain != "" {
		meta["agent.contain"] = res.Contain
	}
	if res.Net != "" {
		meta["agent.net"] = res.Net
	}
	if res.Version != "" {
		meta["agent.version"] = res.Version
	}
	if u := res.Usage; u != nil {
		meta["agent.turns"] = strconv.Itoa(u.Turns)
		meta["agent.tokens_in"] = strconv.FormatInt(u.InputTokens, 10)
		meta["agent.tokens_out"] = strconv.FormatInt(u.OutputTokens, 10)
		if u.CostUSD > 0 {
			meta["agent.cost_usd"] = strconv.FormatFloat(u.CostUSD, 'f', 6, 64)
		}
	}
	return meta
}

// Agent returns the vault's agent as main's head configures it (cairn.yaml,
// and an Eva vault's EVA.md), built as a job's would be, and that head:
// what answers a question asked of the vault. The error is the
// policy's or the runtime's, with its hint.
func (s *Service) Agent(ctx context.Context) (agent.Runtime, cairn.Hash, error) {
	head, err := s.v.Store.Head(ctx, admit.Branch)
	if err != nil {
		return nil, cairn.Hash{}, err
	}
	pol, err := s.policy(ctx)
	if err != nil {
		return nil, head, cairn.Errorf(cairn.EINVALID, "%w", err).WithHint("Fix cairn.yaml on main (cairn settings lists the settings).")
	}
	rt, err := s.runtime(ctx, pol, head)
	return rt, head, err
}
