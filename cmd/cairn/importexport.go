package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/admit"
	"cairn/gitio"
	"cairn/index"
	"cairn/store"
	"cairn/vault"
	"cairn/worktree"
)

func (a *cli) importCmd() *cobra.Command {
	var prefix, message string
	var history bool
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Bring a folder of Markdown and attachments into main (an Eva brain keeps its layout)",
		Long: `Import reads DIR (any folder of Markdown and attachments; an Eva brain keeps
its layout) and commits its files to main, under --prefix if given; then the
vault's folder is updated. Symbolic links are not followed and nothing outside
DIR is read; files that cannot be vault paths (names that are not UTF-8, names
differing only in case, files over 64 MiB) are left out and listed.

With --history, DIR must be a git repository: its first-parent history
becomes cairn commits, one for each git commit, on the branch import/<name>;
when main is empty, that branch is merged into main, else it waits for you
to merge it. Into main, an import goes through admission like any change;
the vault's contract (cairn.yaml, eva.json, EVA.md, AGENTS.md, CLAUDE.md) is
never taken from what an import brings without a person's review: such a
change is held, even into a new vault (cairn review show ID, then accept or
reject it).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				return cairn.Errorf(cairn.EINVALID, "%s is not a folder", dir).WithHint("cairn import takes a folder of Markdown files")
			}
			v, _, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			defer v.MarkBusy("cairn import " + dir)()
			if history {
				return a.importHistory(v, dir, p)
			}
			return a.importFolder(v, dir, prefix, cmpOr(message, "import "+filepath.Base(filepath.Clean(dir))), p)
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", "", "put the files under this folder of the vault")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the commit message (default: import NAME)")
	cmd.Flags().BoolVar(&history, "history", false, "DIR is a git repository: import its history")
	return cmd
}

func (a *cli) importFolder(v *vault.Vault, dir, prefix, message string, p cairn.Principal) error {
	start := time.Now()
	if prefix != "" {
		clean, err := cairn.CleanPath(prefix)
		if err != nil {
			return err
		}
		prefix = clean
	}
	var files []worktree.File
	skips, err := worktree.Walk(dir, nil, func(f worktree.File) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		return err
	}
	var bar *progressbar.ProgressBar
	if a.interactive() {
		bar = progressbar.NewOptions(len(files), progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("reading"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	}
	changes := make([]store.FileChange, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0) * 2
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(files); i += workers {
				data, err := os.ReadFile(files[i].Abs)
				if err != nil {
					errs[i] = err
					continue
				}
				p := files[i].Path
				if prefix != "" {
					p = prefix + "/" + p
				}
				changes[i] = store.FileChange{Path: p, Data: data, Mode: files[i].Mode}
				if bar != nil {
					bar.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("import %s: %w", dir, err)
	}
	head, err := v.Store.Head(a.ctx, index.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return err
	}
	base, err := treeOf(a, v, head)
	if err != nil {
		return err
	}
	// Files already in the vault with the same content change nothing.
	b := v.Store.NewBatch()
	b.KeepFlushed() // the files are in memory: the index need not load them back
	var added, updated, same int
	kept := changes[:0]
	for _, ch := range changes {
		e, err := v.Store.Get(a.ctx, base, ch.Path)
		switch {
		case err != nil:
			added++
		case e.Blob == store.BlobHash(ch.Data) && e.Mode == ch.Mode:
			same++
			continue
		default:
			updated++
		}
		kept = append(kept, ch)
	}
	if bar != nil {
		bar.Describe("committing")
	}
	tree, err := b.Edit(a.ctx, base, kept)
	if err != nil {
		return err
	}
	if len(kept) > 2000 {
		if err := b.Flush(a.ctx); err != nil {
			return err
		}
	}
	// The files are written to the folder, under temporary names, while
	// the change is judged and indexed; the sync then only renames them.
	pre, err := v.PrewriteMain(a.ctx, kept)
	if err != nil {
		return err
	}
	defer pre.Discard()
	var c *cairn.Commit
	var outcome *admit.Outcome
	if len(kept) > 0 {
		outcome, err = v.Admit.Submit(a.ctx, admit.Request{
			Route: "import", Base: head, Tree: tree, Batch: b, Principal: p, Message: message,
			Meta: map[string]string{"import": dir},
		})
		if err != nil {
			return v.ExplainBusy(err)
		}
		if !outcome.Admitted() {
			if bar != nil {
				bar.Finish()
			}
			return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
				a.refused(w, outcome)
				printSkips(w, skips)
			})
		}
		c = outcome.Commit
	}
	if bar != nil {
		bar.Describe("updating the folder")
	}
	rep, err := v.SyncMainPrewritten(a.ctx, pre)
	if err != nil {
		return err
	}
	if bar != nil {
		bar.Finish()
	}
	took := time.Since(start)
	out := items([]map[string]any{{"id": commitID(c), "commit": c, "added": added, "updated": updated, "unchanged": same, "seconds": took.Seconds()}})
	out["skipped"], out["sync"] = skips, rep
	return a.emit(out, func(w io.Writer) {
		if c == nil {
			fmt.Fprintf(w, "Nothing to import: the %d files of %s are in the vault already.\n", same, dir)
		} else {
			fmt.Fprintf(w, "Imported %s as %s: %d added, %d updated, %d unchanged (%s)\n", dir, c.Hash.Short(), added, updated, same, took.Round(time.Millisecond))
			printAdmitted(w, outcome)
		}
		printSkips(w, skips)
		if len(rep.LeftAlone) > 0 {
			printSync(w, rep)
		}
	})
}

// printPlaceholders lists the files an export wrote as a placeholder for
// content purged from the vault.
func printPlaceholders(w io.Writer, ps []gitio.Placeholder) {
	if len(ps) == 0 {
		return
	}
	printCapped(w, "Wrote "+plural(len(ps), "placeholder")+" for content purged from the vault", len(ps), func(i int) string {
		return ps[i].Path + " at " + ps[i].Commit.Short()
	})
	fmt.Fprintln(w, "Each says when, by whom and why its content was purged.")
}

func placeholdersOrEmpty(ps []gitio.Placeholder) []gitio.Placeholder {
	if ps == nil {
		return []gitio.Placeholder{}
	}
	return ps
}

func commitID(c *cairn.Commit) string {
	if c == nil {
		return ""
	}
	return c.Hash.String()
}

func (a *cli) exportCmd() *cobra.Command {
	var at string
	var git bool
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write the files of a commit (default: main) to a new folder, or the history to a git repository",
		Long: `Export writes the files of REF (default main) into DIR, which must be new or
empty. With --git, DIR becomes a git repository holding the history of the
branch REF (default main), one git commit per cairn commit: a commit imported
from git gets back its author, committer and message, with cairn's record of
it in a git note; any other carries its principal and metadata in trailers.

Content removed with cairn purge is written as a one-line placeholder that
says when, by whom and why it was purged; the export lists each file that got
one (with --git, each path at each commit that wrote it).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, _, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			dir := args[0]
			if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return cairn.Errorf(cairn.EINVALID, "%s is not empty", dir).WithHint("Export into a new folder.")
			}
			if git {
				return a.exportGit(v, dir, cmpOr(at, index.Branch))
			}
			c, err := commitAt(a, v, cmpOr(at, index.Branch))
			if err != nil {
				return err
			}
			res, err := gitio.ExportFiles(a.ctx, v.Store, c.Hash, dir)
			if err != nil {
				return err
			}
			out := items([]map[string]any{{"id": dir, "commit": c.Hash, "files": res.Files}})
			out["placeholders"] = placeholdersOrEmpty(res.Placeholders)
			return a.emit(out, func(w io.Writer) {
				fmt.Fprintf(w, "Wrote %d files of %s to %s\n", res.Files, c.Hash.Short(), path.Clean(dir))
				printPlaceholders(w, res.Placeholders)
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the commit, branch or tag to export (default: main); with --git, a branch")
	cmd.Flags().BoolVar(&git, "git", false, "write a git repository with the whole history")
	return cmd
}
