package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
)

func (a *cli) jobsCmd() *cobra.Command {
	var state string
	var limit int
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List the vault's jobs, newest first",
		Long: `Jobs lists the vault's background jobs (kept in its database), newest first:
their id, kind, state, attempts, the source they ingest and their last error.
A job is ` + strings.Join(app.JobStates(), ", ") + `:
queued waits for a worker, scheduled for its time, retrying for the pause
after a failed attempt; failed used up its attempts. --state keeps the jobs
in the states given (comma-separated).

cairn jobs show ID shows one with what its agent did; cairn jobs cancel ID
stops one (its agent's whole process tree); cairn jobs retry ID runs a
failed one again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			var states []string
			if state != "" {
				states = strings.Split(state, ",")
			}
			out, err := c.Jobs(a.ctx, app.JobFilter{States: states, Limit: limit})
			if err != nil {
				return err
			}
			return a.emit(items(out), func(w io.Writer) {
				if len(out) == 0 {
					fmt.Fprintln(w, "No jobs.")
					return
				}
				for _, j := range out {
					printJob(w, j)
				}
			})
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only jobs in these states (comma-separated: "+strings.Join(app.JobStates(), ", ")+")")
	cmd.Flags().IntVar(&limit, "limit", 50, "the most jobs to list")
	cmd.AddCommand(a.jobsShowCmd(), a.jobsCancelCmd(), a.jobsRetryCmd())
	return cmd
}

func printJob(w io.Writer, j *app.Job) {
	last := ""
	if n := len(j.Errors); n > 0 {
		last = "  last error: " + j.Errors[n-1]
	}
	what := shown(j.Name)
	if j.Name == "" {
		what = string(j.Args)
	}
	fmt.Fprintf(w, "%-5d %-8s %-10s attempt %d/%d  %s  %s%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts,
		j.Created.Local().Format(time.DateTime), what, last)
}

func (a *cli) jobsShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a job and what happened under it: its agent's activity, tokens and cost, the verdict",
		Long: `Show prints one job — its state, attempts and errors — and what happened
to its source under it, in order: each attempt's start, its agent's
activity as it was recorded (files written, tools called, messages, the
tokens and cost its CLI reported, errors), and how it ended.`,
		Example: `  cairn jobs show 4
  cairn jobs show 4 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			j, err := c.Job(a.ctx, id)
			if err != nil {
				return err
			}
			return a.emit(j, func(w io.Writer) {
				printJob(w, j)
				for _, e := range j.Errors {
					fmt.Fprintf(w, "  error: %s\n", e)
				}
				p := &eventPrinter{a: a, w: w}
				for _, ev := range j.Events {
					if line := p.line(ev); line != "" {
						fmt.Fprintf(w, "%s  %s\n", ev.Time.Local().Format(time.TimeOnly), line)
					}
				}
			})
		},
	}
}

func (a *cli) jobsCancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job: a queued one never runs, a running one's agent is stopped",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			j, err := c.CancelJob(cairn.NewContextWithPrincipal(a.ctx, p), id)
			if err != nil {
				return err
			}
			return a.emit(items([]*app.Job{j}), func(w io.Writer) {
				if j.State == app.JobRunning {
					fmt.Fprintf(w, "Cancelling job %d: its worker stops the agent within seconds; once cairn jobs shows it cancelled, cairn jobs retry %d runs it again.\n", id, id)
					return
				}
				fmt.Fprintf(w, "Job %d is %s.\n", id, j.State)
			})
		},
	}
}

func (a *cli) jobsRetryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "retry ID",
		Short: "Run a failed, cancelled or finished job again",
		Long: `Retry queues the source of job ID again, as cairn sources retry does: a
failed or rejected source, or one whose job is gone. A job that is still
running is refused (exit 1) and nothing changes: one cancelled runs until
its worker has stopped the agent, which takes seconds; retry it once cairn
jobs shows it cancelled.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			j, err := c.RetryJob(cairn.NewContextWithPrincipal(a.ctx, p), id)
			if err != nil {
				return err
			}
			return a.emit(items([]*app.Job{j}), func(w io.Writer) {
				fmt.Fprintf(w, "Job %d queued again for %s; cairn worker runs it.\n", j.ID, j.Name)
			})
		},
	}
}
