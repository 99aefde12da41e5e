package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/admit"
	"cairn/agent"
	"cairn/durable"
	"cairn/ingest"
	"cairn/vault"
)

// jobs wires the ingest service and the job queue of a vault. With run,
// the queue can run jobs in this process (Start).
func (a *cli) jobs(v *vault.Vault, run bool, activity func(*ingest.Source, string, string)) (*ingest.Service, *durable.Queue, error) {
	opts := &ingest.Options{Activity: activity, Logger: a.warnings()}
	crash := a.vaultOptions().Crash
	if crash != nil {
		opts.Crash = crash
	}
	svc := ingest.New(v, opts)
	cfg := durable.Config{Crash: crash}
	if run {
		workers := river.NewWorkers()
		svc.Register(workers)
		cfg.Workers = workers
		pol, err := policyOf(a, v)
		if err != nil {
			return nil, nil, err
		}
		cfg.MaxWorkers = pol.Workers()
		cfg.PollInterval = 100 * time.Millisecond
	}
	q, err := durable.New(v.DB.Write(), cfg)
	if err != nil {
		return nil, nil, err
	}
	svc.SetQueue(q)
	return svc, q, nil
}

// warnings is the logger of what goes wrong beside a command's work (a
// folder sync that must wait, an agent's workspace that cannot be
// removed): warnings and errors, on standard error, as JSON with --json.
func (a *cli) warnings() *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	if a.json {
		return slog.New(slog.NewJSONHandler(a.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(a.stderr, opts))
}

// policyOf reads main's policy.
func policyOf(a *cli, v *vault.Vault) (*admit.Policy, error) {
	head, err := v.Store.Head(a.ctx, admit.Branch)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return &admit.Policy{}, nil
		}
		return nil, err
	}
	c, err := v.Store.ReadCommit(a.ctx, head)
	if err != nil {
		return nil, err
	}
	return admit.PolicyAt(a.ctx, v.Store, c.Tree)
}

func (a *cli) ingestCmd() *cobra.Command {
	var detach bool
	cmd := &cobra.Command{
		Use:   "ingest FILE...",
		Short: "Add sources and let the vault's agent integrate them (the main job)",
		Long: `Ingest stores each FILE as a source under raw/ (a different file whose name is
taken gets raw/<stem>.<hash>.<ext>; nothing is ever overwritten), commits it
to main, records it and enqueues a job, in one transaction. Then it runs the
jobs here, showing progress, until each source has a verdict: the vault's
agent (cairn settings get agent.runtime) proposes a change, and admission
admits it, holds it for review, or rejects it.

Formats: .md and .txt. The same content is never ingested twice; a file that
is empty, binary, too large or badly named is recorded as a failed source
with the reason. A source queued before whose job has not finished (an
ingest that was interrupted, or one with --detach) is not queued again: its
job runs here too, and ingest waits for its verdict. With --detach, ingest
only enqueues: cairn worker runs the jobs.

Exit codes: 0 every source merged (or was merged before), or with --detach
queued; 1 some source was held, rejected or failed (now or before), or is
queued under a job that is gone; 2 usage errors (a missing file).`,
		Example: `  cairn ingest paper.md notes.txt
  cairn ingest --detach *.md && cairn worker`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, _, p, err := a.openAs()
			if err != nil {
				return err
			}
			defer v.Close()
			var bar *progressbar.ProgressBar
			printer := &eventPrinter{a: a, v: v, w: a.stdout}
			svc, q, err := a.jobs(v, !detach, printer.activity)
			if err != nil {
				return err
			}
			printer.svc = svc
			since, err := lastEvent(a, v)
			if err != nil {
				return err
			}
			added, err := svc.Add(a.ctx, args, p)
			if err != nil {
				return v.ExplainBusy(err)
			}
			if !a.json {
				printAdded(a.stdout, added)
			}
			// Wait for the sources queued now, and for those queued before
			// (by an ingest that was killed, or --detach) whose jobs have
			// not finished: their jobs run here too.
			var wait []string
			queued, before := 0, 0
			seen := map[string]bool{}
			for _, ad := range added {
				if seen[ad.Source.ID] || !ad.Queued && !pending(ad) {
					continue
				}
				seen[ad.Source.ID] = true
				wait = append(wait, ad.Source.ID)
				if ad.Queued {
					queued++
				} else {
					before++
				}
			}
			if detach || len(wait) == 0 {
				if !a.json && detach && queued > 0 {
					fmt.Fprintf(a.stdout, "Queued %s; cairn worker runs the jobs, cairn sources shows where they are.\n", plural(queued, "source"))
				}
				if !a.json && detach && before > 0 {
					fmt.Fprintf(a.stdout, "%s queued before still wait for their jobs; cairn worker runs them.\n", plural(before, "source"))
				}
				return a.finishIngest(svc, added)
			}
			if a.interactive() {
				bar = progressbar.NewOptions(len(wait), progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("ingesting"),
					progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
				printer.bar = bar
			}
			if err := q.Start(a.ctx); err != nil {
				return err
			}
			printer.after = since
			err = printer.until(a.ctx, func() (bool, error) {
				done := 0
				for _, id := range wait {
					src, err := svc.Get(a.ctx, id)
					if err != nil {
						return false, err
					}
					if _, stuck := svc.Stuck(a.ctx, src); final(src.Status) || stuck {
						done++ // a source whose job is gone waits for nothing
					}
				}
				if bar != nil {
					bar.Set(done)
				}
				return done == len(wait), nil
			})
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 10*time.Second)
			defer cancel()
			if serr := q.Stop(stopCtx); serr != nil && err == nil {
				err = serr
			}
			svc.Flush()
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				if a.ctx.Err() != nil {
					fmt.Fprintln(a.stderr, "Interrupted: the sources not finished stay queued; cairn worker runs them.")
				}
				return err
			}
			return a.finishIngest(svc, added)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "only enqueue; cairn worker runs the jobs")
	return cmd
}

func final(status string) bool {
	switch status {
	case ingest.Merged, ingest.Held, ingest.Rejected, ingest.Failed:
		return true
	}
	return false
}

// pending reports whether a file's source was queued before and its job
// has not finished: the ingest runs (or waits for) that job.
func pending(ad *ingest.Added) bool {
	return ad.Known && (ad.Source.Status == ingest.Queued || ad.Source.Status == ingest.Running)
}

func printAdded(w io.Writer, added []*ingest.Added) {
	for _, ad := range added {
		src := ad.Source
		switch {
		case ad.Queued:
			fmt.Fprintf(w, "queued   %s → %s (job %d)\n", shown(src.Name), src.Path, src.Job)
		case pending(ad):
			fmt.Fprintf(w, "pending  %s: %s; job %d\n", shown(filepath.Base(ad.File)), ad.Note, src.Job)
		case ad.Note != "":
			fmt.Fprintf(w, "skipped  %s: %s\n", shown(filepath.Base(ad.File)), ad.Note)
		default:
			fmt.Fprintf(w, "refused  %s: %s\n", shown(src.Name), src.Error)
			if src.Hint != "" {
				fmt.Fprintf(w, "         Hint: %s\n", src.Hint)
			}
		}
	}
}

// finishIngest prints where every source ended and sets the exit code.
func (a *cli) finishIngest(svc *ingest.Service, added []*ingest.Added) error {
	type item struct {
		ID string `json:"id"`
		*ingest.Source
		File   string `json:"file"`
		Queued bool   `json:"queued"`
		Note   string `json:"note,omitempty"`
	}
	var out []item
	counts := map[string]int{}
	var stuck []string
	for _, ad := range added {
		src := ad.Source
		waited := ad.Queued || pending(ad)
		if waited {
			if cur, err := svc.Get(a.ctx, src.ID); err == nil {
				src = cur
			}
		}
		if ad.Note != "" && !waited && (src.Status == ingest.Rejected || src.Status == ingest.Failed) {
			a.code = exitRefused // known content that stays refused
		}
		if ad.Note == "" || waited {
			counts[src.Status]++
			if src.Status != ingest.Merged && (waited || src.Status == ingest.Failed) && final(src.Status) {
				a.code = exitRefused
			}
		}
		if why, ok := svc.Stuck(a.ctx, src); waited && ok {
			a.code = exitRefused
			stuck = append(stuck, fmt.Sprintf("%s is %s but %s: nothing will run it. Try: cairn sources retry %s", shown(src.Name), src.Status, why, src.ID[:12]))
		}
		out = append(out, item{ID: src.ID, Source: src, File: ad.File, Queued: ad.Queued, Note: ad.Note})
	}
	return a.emit(items(out), func(w io.Writer) {
		var parts []string
		for _, s := range []string{ingest.Merged, ingest.Held, ingest.Rejected, ingest.Failed, ingest.Queued, ingest.Running} {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		for _, line := range stuck {
			fmt.Fprintln(w, line)
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "Sources: %s.\n", strings.Join(parts, ", "))
		}
		if counts[ingest.Held] > 0 {
			fmt.Fprintln(w, "Next: cairn review list")
		}
	})
}

func (a *cli) workerCmd() *cobra.Command {
	var drain bool
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the vault's jobs in the foreground until stopped",
		Long: `Worker runs queued jobs (ingests enqueued with --detach, retried jobs) and
prints what happens, until interrupted (Ctrl-C). Several workers may run on
one vault. A worker that starts hands the jobs of a worker that died back to
the queue within seconds. With --drain it stops by itself once no job is
queued or running (for scripts).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v, _, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			printer := &eventPrinter{a: a, v: v, w: a.stdout}
			svc, q, err := a.jobs(v, true, printer.activity)
			if err != nil {
				return err
			}
			printer.svc = svc
			if printer.after, err = lastEvent(a, v); err != nil {
				return err
			}
			if err := q.Start(a.ctx); err != nil {
				return err
			}
			if _, err = v.SyncMain(a.ctx); err == nil {
				if !a.json {
					fmt.Fprintf(a.stdout, "Worker %s running jobs of %s (Ctrl-C stops).\n", q.ID(), v.Root)
				}
				err = printer.until(a.ctx, func() (bool, error) {
					if !drain {
						return false, nil
					}
					jobs, err := q.Jobs(a.ctx, 1, durable.StateQueued, durable.StateRunning, durable.StateRetrying, durable.StateScheduled)
					return len(jobs) == 0, err
				})
			}
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 30*time.Second)
			defer cancel()
			serr := q.Stop(stopCtx)
			svc.Flush()
			if ferr := printer.flush(stopCtx); ferr != nil && serr == nil {
				serr = ferr
			}
			// Leave main's folder at main's head (a sync after an
			// admission may have been cut short by the stop).
			if _, err := v.SyncMain(stopCtx); err != nil && serr == nil {
				serr = err
			}
			if a.ctx.Err() != nil {
				if !a.json {
					fmt.Fprintln(a.stdout, "Worker stopped.")
				}
				return serr
			}
			if err == nil {
				err = serr
			}
			if err == nil && drain && !a.json {
				fmt.Fprintln(a.stdout, "Nothing is queued or running. Worker stopped.")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&drain, "drain", false, "stop once no job is queued or running")
	return cmd
}

// eventPrinter prints what happens to sources and proposals, from the
// events table, as it happens.
type eventPrinter struct {
	a     *cli
	v     *vault.Vault
	svc   *ingest.Service
	w     io.Writer
	bar   *progressbar.ProgressBar
	after int64
	names map[string]string
	// mu orders lines printed from the event loop and from agents' output,
	// which arrives on the workers' goroutines.
	mu sync.Mutex
	// started are the sources whose "running" line was printed when their
	// agent started here.
	started map[string]bool
}

func lastEvent(a *cli, v *vault.Vault) (int64, error) {
	var id int64
	err := v.DB.Read().QueryRowContext(a.ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&id)
	return id, err
}

// until prints events every 100ms until done reports true or ctx ends.
func (e *eventPrinter) until(ctx context.Context, done func() (bool, error)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := e.flush(ctx); err != nil {
			return err
		}
		ok, err := done()
		if err != nil || ok {
			if err == nil {
				err = e.flush(ctx)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (e *eventPrinter) flush(ctx context.Context) error {
	evs, err := admit.Events(ctx, e.v.DB.Read(), e.after, 500)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		e.after = ev.ID
		if line := e.line(ctx, ev); line != "" && !e.a.json {
			e.print(line)
		}
	}
	return nil
}

func (e *eventPrinter) print(line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bar != nil {
		e.bar.Clear()
	}
	fmt.Fprintln(e.w, line)
	if e.bar != nil {
		e.bar.RenderBlank()
	}
}

func (e *eventPrinter) name(ctx context.Context, id string) string {
	if e.names == nil {
		e.names = map[string]string{}
	}
	if n, ok := e.names[id]; ok {
		return n
	}
	n := id[:min(12, len(id))]
	if src, err := e.svc.Get(ctx, id); err == nil {
		n = shown(src.Name)
	}
	e.names[id] = n
	return n
}

// line turns an event into a line for people, or "".
func (e *eventPrinter) line(ctx context.Context, ev admit.EventRow) string {
	var d struct {
		Job      int64  `json:"job"`
		Attempt  int    `json:"attempt"`
		Agent    string `json:"agent"`
		Mode     string `json:"mode"`
		Proposal int64  `json:"proposal"`
		Error    string `json:"error"`
		Hint     string `json:"hint"`
	}
	json.Unmarshal(ev.Data, &d)
	switch ev.Kind {
	case "ingest.running":
		e.mu.Lock()
		seen := e.started[ev.Subject]
		delete(e.started, ev.Subject)
		e.mu.Unlock()
		if seen {
			return "" // printed when its agent started here
		}
		again := ""
		if d.Attempt > 1 {
			again = fmt.Sprintf(", attempt %d", d.Attempt)
		}
		if d.Mode != "" {
			again += ", " + d.Mode
		}
		return fmt.Sprintf("%s: running (%s agent, job %d%s)", e.name(ctx, ev.Subject), d.Agent, d.Job, again)
	case "ingest.merged":
		summary := ""
		if p, err := e.v.Admit.Get(ctx, d.Proposal); err == nil {
			summary = ": " + p.Summary
		}
		return fmt.Sprintf("%s: merged (proposal %d)%s", e.name(ctx, ev.Subject), d.Proposal, summary)
	case "ingest.held":
		why := ""
		if p, err := e.v.Admit.Get(ctx, d.Proposal); err == nil {
			why = " — " + heldReasons(p.Findings)
		}
		return fmt.Sprintf("%s: held for review as proposal %d%s. Next: cairn review show %d", e.name(ctx, ev.Subject), d.Proposal, why, d.Proposal)
	case "ingest.rejected":
		why := ""
		if p, err := e.v.Admit.Get(ctx, d.Proposal); err == nil {
			why = " — " + heldReasons(p.Findings)
		}
		return fmt.Sprintf("%s: rejected (proposal %d)%s", e.name(ctx, ev.Subject), d.Proposal, why)
	case "ingest.failed":
		line := fmt.Sprintf("%s: failed: %s", e.name(ctx, ev.Subject), d.Error)
		if d.Hint != "" {
			line += "\n  Hint: " + d.Hint
		}
		return line
	}
	return ""
}

// activityBytes bounds a line of an agent's activity as printed.
const activityBytes = 200

// activity prints what an agent does, as it does it. A line of its output
// is printed as clean text (agent.Clean): it reaches the terminal without
// escape sequences (a clipboard write, a window title, colours), control
// or invisible characters, cut at a whole character.
func (e *eventPrinter) activity(src *ingest.Source, kind, text string) {
	if e.a.json {
		return
	}
	if text = agent.Clean(text, activityBytes); text == "" {
		return
	}
	switch kind {
	case "file":
		text = "wrote " + text
	case "start":
		e.mu.Lock()
		if e.started == nil {
			e.started = map[string]bool{}
		}
		e.started[src.ID] = true
		e.mu.Unlock()
		e.print(fmt.Sprintf("%s: running (%s)", shown(src.Name), text))
		return
	}
	e.print(fmt.Sprintf("  %s │ %s", shown(src.Name), text))
}

// heldReasons says in a few words why a proposal was not admitted.
func heldReasons(fs []cairn.Finding) string {
	seen := map[string]bool{}
	var parts []string
	for _, f := range fs {
		if f.Verdict == cairn.Admit {
			continue
		}
		k := f.Gate + "/" + f.Rule
		if seen[k] {
			continue
		}
		seen[k] = true
		parts = append(parts, k)
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}

// jobID parses a job id argument.
func jobID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError("%q is not a job id (a number; cairn jobs lists them)", s)
	}
	return id, nil
}
