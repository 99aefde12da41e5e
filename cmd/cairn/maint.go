package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"cairn/app"
)

func (a *cli) reindexCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild main's index (links, full text, lint) from the store",
		Long:  `Reindex throws the derived index away and builds it again from main's head. Run it when cairn doctor reports drift; nothing in the index is needed to rebuild it.`,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Reindex(a.ctx)
			if err != nil {
				return err
			}
			st, took := res.Stats, res.Took
			return a.emit(items([]map[string]any{{"id": "main", "stats": st, "seconds": took.Seconds()}}), func(w io.Writer) {
				fmt.Fprintf(w, "Indexed %d files (%d pages, %d links, %d findings) in %s\n", st.Files, st.Pages, st.Links, st.Findings, took.Round(time.Millisecond))
			})
		},
	}
}

func (a *cli) doctorCmd() *cobra.Command {
	var quick bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the vault: objects, index against store, working trees, proposals, sources",
		Long: `Doctor reads every object reachable from a branch, tag or pin and checks its
hash and encoding; compares the index with main's head (every derived row,
unless --quick); checks each working tree (its folder exists and holds its
branch's head: opening the vault first finishes any sync an interrupted
command owed a folder, and doctor lists what it repaired), every proposal (a
held one has its branch, an admitted one its commit), main's cairn.yaml (it
parses), and every source (its status is its proposal's; a queued or running
one has a live job). Exit code 1 when it finds a problem.

The full comparison rebuilds the index and compares every row, at 100k
pages in about 45 s, as long as cairn reindex. It reads one view of the
vault and writes the rebuild into temporary tables, with a copy of the
committed rows (on SQLite in its temporary folder: $SQLITE_TMPDIR, else
$TMPDIR, else /var/tmp): commits, admissions and imports go on meanwhile,
and what they change is not part of the check (content purged meanwhile
voids it: it says so, to be run again). A PostgreSQL role that may not
make temporary tables rebuilds in a transaction it rolls back that holds
the vault's write lock: a write meanwhile waits 5 s for it, then fails as
busy. --quick compares only the indexed files with main's tree.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a.quiet = true // doctor lists what opening repaired itself
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			rep, err := c.Doctor(a.ctx, app.DoctorOptions{Quick: quick})
			if err != nil {
				return err
			}
			out := rep.Problems
			if !rep.OK() {
				a.code = exitRefused
			}
			res := items(out)
			res["commits"], res["nodes"], res["blobs"], res["purged"] = rep.Commits, rep.Nodes, rep.Blobs, rep.Purged
			res["repaired"] = cmpSlice(rep.Repaired)
			return a.emit(res, func(w io.Writer) {
				for _, r := range rep.Repaired {
					fmt.Fprintf(w, "Repaired: %s\n", r)
				}
				fmt.Fprintf(w, "Store: %d commits, %d tree nodes, %d files checked (%d purged).\n", rep.Commits, rep.Nodes, rep.Blobs, rep.Purged)
				if len(out) == 0 {
					fmt.Fprintln(w, "No problems found.")
					return
				}
				for _, p := range out {
					fmt.Fprintf(w, "  %s: %s\n", p.Area, p.Problem)
				}
				fmt.Fprintln(w, "Index drift is repaired by cairn reindex.")
			})
		},
	}
	cmd.Flags().BoolVar(&quick, "quick", false, "compare only files, not every derived row")
	return cmd
}

func (a *cli) gcCmd() *cobra.Command {
	var grace time.Duration
	var now, dry bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Delete objects no branch, tag or pin reaches",
		Long: `Gc deletes the objects that nothing reaches any more: abandoned branches and
drafts. History is never collected. Objects younger than --grace (default one
hour), and ref values logged within it, are kept, so a running import or a
reader of an old head is never cut short; --now drops the grace (only safe
when no other cairn process is writing).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.GC(a.ctx, app.GCOptions{Grace: grace, Now: now, DryRun: dry})
			if err != nil {
				return err
			}
			return a.emit(items([]map[string]any{{"id": "gc", "deleted": st.Deleted, "reachable": st.Reachable, "bytes": st.Bytes, "dry_run": dry}}), func(w io.Writer) {
				verb := "Deleted"
				if dry {
					verb = "Would delete"
				}
				fmt.Fprintf(w, "%s %d objects (%d bytes); %d reachable.\n", verb, st.Deleted, st.Bytes, st.Reachable)
			})
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", 0, "keep unreachable objects younger than this (default 1h)")
	cmd.Flags().BoolVar(&now, "now", false, "no grace period")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "count, delete nothing")
	return cmd
}

func (a *cli) purgeCmd() *cobra.Command {
	var at, reason string
	cmd := &cobra.Command{
		Use:   "purge PATH --at REF --reason WHY",
		Short: "Remove a file's content from all history (a leaked secret, a takedown)",
		Long: `Purge removes the content PATH has at REF from the database, in every commit
that holds the same content, without rewriting history: the hash stays, and
reading the content afterwards says it was purged, when, by whom and why. The
freed pages are overwritten and the write-ahead log is checkpointed. Working
trees keep their files; edit or delete them yourself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if at == "" || reason == "" {
				return usageError("purge needs --at REF and --reason WHY")
			}
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Purge(ctx, args[0], at, reason)
			if err != nil {
				return err
			}
			h := res.Blob
			return a.emit(items([]map[string]any{{"id": h, "path": args[0], "at": at, "reason": reason}}), func(w io.Writer) {
				fmt.Fprintf(w, "Purged the content %s of %s (%s).\n", h.Short(), args[0], reason)
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the commit, branch or tag whose version to purge (required)")
	cmd.Flags().StringVar(&reason, "reason", "", "why (required; recorded)")
	return cmd
}
