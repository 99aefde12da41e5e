package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cairn/durable"
)

func (a *app) jobsCmd() *cobra.Command {
	var state string
	var limit int
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List the vault's jobs, newest first",
		Long: `Jobs lists background jobs (River jobs in the vault's database): their id,
kind, state (available, running, retryable, completed, cancelled, discarded),
attempts and errors. cairn jobs cancel ID stops one (its agent's whole process
tree); cairn jobs retry ID runs a failed one again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v, _, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			_, q, err := a.jobs(v, false, nil)
			if err != nil {
				return err
			}
			var states []string
			if state != "" {
				states = strings.Split(state, ",")
			}
			jobs, err := q.Jobs(a.ctx, limit, states...)
			if err != nil {
				return err
			}
			return a.emit(items(jobs), func(w io.Writer) {
				if len(jobs) == 0 {
					fmt.Fprintln(w, "No jobs.")
					return
				}
				for _, j := range jobs {
					printJob(w, j)
				}
			})
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only jobs in these states (comma-separated)")
	cmd.Flags().IntVar(&limit, "limit", 50, "the most jobs to list")
	cmd.AddCommand(a.jobsCancelCmd(), a.jobsRetryCmd())
	return cmd
}

func printJob(w io.Writer, j *durable.Job) {
	last := ""
	if n := len(j.Errors); n > 0 {
		last = "  last error: " + j.Errors[n-1]
	}
	fmt.Fprintf(w, "%-5d %-8s %-10s attempt %d/%d  %s  %s%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts,
		j.Created.Local().Format(time.DateTime), string(j.Args), last)
}

func (a *app) jobsCancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job: a queued one never runs, a running one's agent is stopped",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			v, _, p, err := a.openAs()
			if err != nil {
				return err
			}
			defer v.Close()
			svc, _, err := a.jobs(v, false, nil)
			if err != nil {
				return err
			}
			j, err := svc.CancelJob(a.ctx, id, p)
			if err != nil {
				return v.ExplainBusy(err)
			}
			return a.emit(items([]*durable.Job{j}), func(w io.Writer) {
				if j.State == "running" {
					fmt.Fprintf(w, "Cancelling job %d: its worker stops the agent within seconds.\n", id)
					return
				}
				fmt.Fprintf(w, "Job %d is %s.\n", id, j.State)
			})
		},
	}
}

func (a *app) jobsRetryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "retry ID",
		Short: "Run a failed, cancelled or finished job again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := jobID(args[0])
			if err != nil {
				return err
			}
			v, _, p, err := a.openAs()
			if err != nil {
				return err
			}
			defer v.Close()
			svc, q, err := a.jobs(v, false, nil)
			if err != nil {
				return err
			}
			src, err := svc.RetryJob(a.ctx, id, p)
			if err != nil {
				return v.ExplainBusy(err)
			}
			j, err := q.Get(a.ctx, src.Job)
			if err != nil {
				return err
			}
			return a.emit(items([]*durable.Job{j}), func(w io.Writer) {
				fmt.Fprintf(w, "Job %d queued again for %s; cairn worker runs it.\n", j.ID, src.Name)
			})
		},
	}
}
