package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/ingest"
)

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

Formats: .md, .txt, .html and .pdf (HTML and PDF are converted to
Markdown for the agent, a PDF page by page; the original is kept in raw/). The same content is never ingested twice; a file that
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
			p, err := a.principal()
			if err != nil {
				return err
			}
			printer := &eventPrinter{a: a, w: a.stdout}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			var bar *progressbar.ProgressBar
			waited := false // the jobs run here
			res, err := c.Ingest(cairn.NewContextWithPrincipal(a.ctx, p), args, app.IngestOptions{
				Detach: detach,
				Added: func(added []*ingest.Added) {
					if !a.json {
						printAdded(a.stdout, added)
					}
				},
				Progress: func(done, total int) {
					waited = true
					switch {
					case bar != nil:
						bar.Set(done)
					case a.interactive():
						bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("ingesting"),
							progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
						printer.setBar(bar)
					}
				},
				Event: printer.event,
			})
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				if waited && a.ctx.Err() != nil {
					fmt.Fprintln(a.stderr, "Interrupted: the sources not finished stay queued; cairn worker runs them.")
				}
				return err
			}
			if !a.json && detach && res.Queued > 0 {
				fmt.Fprintf(a.stdout, "Queued %s; cairn worker runs the jobs, cairn sources shows where they are.\n", plural(res.Queued, "source"))
			}
			if !a.json && detach && res.Before > 0 {
				fmt.Fprintf(a.stdout, "%s queued before still wait for their jobs; cairn worker runs them.\n", plural(res.Before, "source"))
			}
			return a.finishIngest(res)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "only enqueue; cairn worker runs the jobs")
	return cmd
}

func printAdded(w io.Writer, added []*ingest.Added) {
	for _, ad := range added {
		src := ad.Source
		switch {
		case ad.Queued:
			fmt.Fprintf(w, "queued   %s → %s (job %d)\n", shown(src.Name), src.Path, src.Job)
		case ad.Known && (src.Status == ingest.Queued || src.Status == ingest.Running): // queued before, not finished
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
func (a *cli) finishIngest(res *app.IngestResult) error {
	type item struct {
		ID string `json:"id"`
		*ingest.Source
		File   string `json:"file"`
		Queued bool   `json:"queued"`
		Note   string `json:"note,omitempty"`
	}
	var out []item
	var stuck []string
	for _, f := range res.Files {
		src := f.Source
		if f.Refused {
			a.code = exitRefused
		}
		if f.Stuck != "" {
			stuck = append(stuck, fmt.Sprintf("%s is %s but %s: nothing will run it. Try: cairn sources retry %s", shown(src.Name), src.Status, f.Stuck, src.ID[:12]))
		}
		out = append(out, item{ID: src.ID, Source: src, File: f.File, Queued: f.Queued, Note: f.Note})
	}
	counts := res.Counts
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
queued or running (for scripts).

While it runs, it also watches the working trees' folders, so that cairn
status needs no walk of them (docs/vault.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			printer := &eventPrinter{a: a, w: a.stdout}
			c, err := a.local("worker")
			if err != nil {
				return err
			}
			defer c.Close()
			err = c.RunWorker(a.ctx, app.WorkerOptions{
				Drain: drain,
				Started: func(id string) {
					if !a.json {
						fmt.Fprintf(a.stdout, "Worker %s running jobs of %s (Ctrl-C stops).\n", id, c.Root())
					}
				},
				Event: printer.event,
			})
			if a.ctx.Err() != nil {
				if !a.json {
					fmt.Fprintln(a.stdout, "Worker stopped.")
				}
				return err
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

// eventPrinter prints what happens to sources and proposals, and what
// agents do, from the vault's events, as it happens.
type eventPrinter struct {
	a     *cli
	w     io.Writer
	names map[string]string
	// mu orders lines printed above the progress bar; it guards bar.
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// setBar makes lines print above bar.
func (e *eventPrinter) setBar(bar *progressbar.ProgressBar) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bar = bar
}

// event prints an event's line, if it has one.
func (e *eventPrinter) event(ev *app.Event) {
	if line := e.line(ev); line != "" && !e.a.json {
		e.print(line)
	}
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

// name is how an event's source is named: the name it was first printed
// with, its id's first 12 digits when it is not recorded.
func (e *eventPrinter) name(ev *app.Event) string {
	if e.names == nil {
		e.names = map[string]string{}
	}
	if n, ok := e.names[ev.Subject]; ok {
		return n
	}
	n := ev.Subject[:min(12, len(ev.Subject))]
	if ev.Source != nil {
		n = shown(ev.Source.Name)
	}
	e.names[ev.Subject] = n
	return n
}

// line turns an event into a line for people, or "": what the event
// says (app.Event.Describe), after the source's name, with what to do
// next.
func (e *eventPrinter) line(ev *app.Event) string {
	text := ev.Describe()
	if text == "" {
		return ""
	}
	if ev.Kind == "ingest.activity" {
		return fmt.Sprintf("  %s │ %s", e.name(ev), text)
	}
	line := e.name(ev) + ": " + text
	d := ev.Fields()
	switch {
	case ev.Kind == "ingest.held":
		line += fmt.Sprintf(". Next: cairn review show %d", d.Proposal)
	case ev.Kind == "ingest.failed" && d.Hint != "":
		line += "\n  Hint: " + d.Hint
	}
	return line
}

// jobID parses a job id argument.
func jobID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError("%q is not a job id (a number; cairn jobs lists them)", s)
	}
	return id, nil
}
