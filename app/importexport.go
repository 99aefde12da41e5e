package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/gitio"
	"cairn/store"
	"cairn/worktree"
)

// Stages of an import, as Progress callbacks name them.
const (
	StageReading   = "reading"             // ImportFolder reads the folder's files
	StageCommit    = "committing"          // ImportFolder builds the tree and submits it
	StageSync      = "updating the folder" // main's folder is brought up to the import
	StageHistory   = "importing history"   // ImportHistory turns git commits into cairn commits
	StageExporting = "exporting history"   // ExportGit writes cairn commits as git commits
)

// ImportOptions configure ImportFolder. The zero value imports to the
// vault's root.
type ImportOptions struct {
	// Prefix is the vault folder the files go under. Default: the root.
	Prefix string
	// Message is the commit message. Default "import NAME", NAME the
	// folder's last element.
	Message string
	// Progress, when set, is called as the import goes: stage is one of
	// StageReading (done counts the files read of total), StageCommit and
	// StageSync. Calls come one at a time, from any goroutine.
	Progress func(stage string, done, total int)
}

// FolderImport is what ImportFolder did.
type FolderImport struct {
	Dir string `json:"dir"`
	// Commit is main's new commit; nil when nothing changed, or when
	// admission did not admit the import (see Outcome).
	Commit *cairn.Commit `json:"commit"`
	// Outcome is admission's outcome; nil when the files were all in the
	// vault already. An outcome that did not admit the import (the vault's
	// contract changed, held for review) leaves main as it was.
	Outcome *admit.Outcome `json:"outcome,omitempty"`
	// Added, Updated and Unchanged count the folder's files: new to the
	// vault, with other content or mode, the same as main has.
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// Skipped are the files that cannot be vault files, and why.
	Skipped []worktree.Skip `json:"skipped"`
	// Sync is what bringing main's folder up to main changed; nil when the
	// import was not admitted.
	Sync *worktree.SyncReport `json:"sync,omitempty"`
	// Took is how long the import took.
	Took time.Duration `json:"took"`
}

// checkImportDir refuses a dir that is not a folder.
func checkImportDir(dir string) error {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return cairn.Errorf(cairn.EINVALID, "%s is not a folder", dir).WithHint("cairn import takes a folder of Markdown files")
	}
	return nil
}

// importName is the name an import of dir goes by: its last element.
func importName(dir string) string { return filepath.Base(filepath.Clean(dir)) }

// ImportFolder commits the files of dir (any folder of Markdown and
// attachments) to main as the principal's change, through admission
// (route "import"), and brings main's folder up to it. Symbolic links are
// not followed and nothing outside dir is read; files that cannot be vault
// paths are left out and listed in Skipped. Files main holds already with
// the same content change nothing.
//
// It needs a principal (EUNAUTHORIZED); a dir that is not a folder or a
// prefix that is not a vault path is refused (EINVALID) before anything
// changes. An import admission holds or rejects is returned in Outcome, not
// as an error.
func (a *App) ImportFolder(ctx context.Context, dir string, opts *ImportOptions) (*FolderImport, error) {
	opts = cmp.Or(opts, &ImportOptions{})
	if err := checkImportDir(dir); err != nil {
		return nil, err
	}
	if _, err := Principal(ctx); err != nil {
		return nil, err // refused before anything is read
	}
	prefix := opts.Prefix
	if prefix != "" {
		var err error
		if prefix, err = cairn.CleanPath(prefix); err != nil {
			return nil, err
		}
	}
	message := cmp.Or(opts.Message, "import "+importName(dir))
	defer a.v.MarkBusy("cairn import " + dir)()
	start := a.now()
	progress := func(string, int, int) {}
	if opts.Progress != nil {
		var mu sync.Mutex
		progress = func(stage string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			opts.Progress(stage, done, total)
		}
	}

	var files []worktree.File
	skips, err := worktree.Walk(dir, nil, func(f worktree.File) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	head, err := a.v.Store.Head(ctx, admit.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, fmt.Errorf("import %s: read main: %w", dir, err)
	}
	base, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, fmt.Errorf("import %s: read main: %w", dir, err)
	}
	// The files are written to the folder, under temporary names, from
	// the store, while they are read and the change is judged and indexed;
	// the sync after admission only renames them.
	b := a.v.Store.NewBatch()
	pre, err := a.v.PrewriteMain(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	defer pre.Discard()
	res := &FolderImport{Dir: dir, Skipped: skips}
	progress(StageReading, 0, len(files))
	kept, err := a.readImport(ctx, files, prefix, base, b, pre, res, func(done int) { progress(StageReading, done, len(files)) })
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, a.v.ExplainBusy(err))
	}
	total := len(files)
	files = nil // read: not held through admission
	pre.Close()
	progress(StageCommit, total, total)
	tree, err := b.Edit(ctx, base, kept)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	if len(kept) > 2000 {
		// The tree's nodes too, outside the admission's transaction.
		if err := b.Flush(ctx); err != nil {
			return nil, fmt.Errorf("import %s: %w", dir, a.v.ExplainBusy(err))
		}
	}
	if len(kept) > 0 {
		res.Outcome, err = a.submit(ctx, submission{
			Route: "import", Base: head, Tree: tree, Batch: b, Message: message,
			Meta: map[string]string{"import": dir},
		})
		if err != nil {
			return nil, err
		}
		if !res.Outcome.Admitted() {
			res.Took = a.now().Sub(start)
			return res, nil
		}
		res.Commit = res.Outcome.Commit
	}
	progress(StageSync, total, total)
	if res.Sync, err = a.v.SyncMainPrewritten(ctx, pre); err != nil {
		return nil, err
	}
	res.Took = a.now().Sub(start)
	return res, nil
}

// readImport reads files on every core and returns the changes that put
// them under prefix, naming their content: the files base holds already
// with the same content and mode are left out, the others' content goes to
// b, which writes it to the store as it fills, and pre stages it, reading
// it back from b. It counts the files in res and calls read
// with the count read so far after each. Content written to the store
// before a failure is unreachable, and goes with the next GC.
func (a *App) readImport(ctx context.Context, files []worktree.File, prefix string, base cairn.Hash,
	b *store.Batch, pre *worktree.Prewritten, res *FolderImport, read func(done int)) ([]store.FileChange, error) {
	// Each file's change, and whether it adds or updates one; a vault of
	// a million files holds these once, compacted in place to the kept.
	const (
		added = 1 + iota
		updated
	)
	changes := make([]store.FileChange, len(files))
	how := make([]uint8, len(files))
	errs := make([]error, len(files))
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0) * 2
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(files) && ctx.Err() == nil; i += workers {
				errs[i] = func() error {
					data, err := worktree.ReadFile(files[i], worktree.DefaultMaxFileSize)
					if err != nil {
						return err
					}
					// A path of its own, kept through admission (see
					// worktree.Walk).
					var p string
					if prefix == "" {
						p = strings.Clone(files[i].Path)
					} else {
						p = prefix + "/" + files[i].Path
					}
					h := store.BlobHash(data)
					e, err := a.v.Store.Get(ctx, base, p)
					switch {
					case err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND:
						return err
					case err != nil:
						how[i] = added
					case e.Blob == h && e.Mode == files[i].Mode:
						return nil // unchanged
					default:
						how[i] = updated
					}
					changes[i] = store.FileChange{Path: p, Blob: b.PutBlob(data), Size: int64(len(data)), Mode: files[i].Mode}
					if err := pre.Add(ctx, changes[i:i+1]); err != nil {
						return err
					}
					return b.Spill(ctx)
				}()
				mu.Lock()
				done++
				n := done
				mu.Unlock()
				read(n)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, err
	}
	kept := changes[:0]
	for i, c := range changes {
		switch how[i] {
		case added:
			res.Added++
		case updated:
			res.Updated++
		default:
			res.Unchanged++
			continue
		}
		kept = append(kept, c)
	}
	if len(kept) < len(changes)/2 {
		return slices.Clone(kept), nil // most unchanged: not the whole array through admission
	}
	clear(changes[len(kept):])
	return kept, nil
}

// HistoryOptions configure ImportHistory. The zero value gives the
// defaults.
type HistoryOptions struct {
	// Progress, when set, is called after each imported git commit with
	// stage StageHistory.
	Progress func(stage string, done, total int)
}

// HistoryImport is what ImportHistory did.
type HistoryImport struct {
	Dir string `json:"dir"`
	// Branch is the new branch that holds the history: import/NAME.
	Branch string `json:"branch"`
	// Head is the branch's head, the last imported commit.
	Head cairn.Hash `json:"head"`
	// Commits is the number of git commits imported.
	Commits int `json:"commits"`
	// Skipped are the files of the history the vault does not hold.
	Skipped []gitio.Skipped `json:"skipped"`
	// IntoMain is set when main held nothing, so the branch was submitted
	// to main: Outcome says what admission decided.
	IntoMain bool           `json:"into_main"`
	Outcome  *admit.Outcome `json:"outcome,omitempty"`
	// Sync is what bringing main's folder up to main changed; nil unless
	// the branch was merged into main.
	Sync *worktree.SyncReport `json:"sync,omitempty"`
}

// ImportHistory turns the first-parent history of the git repository dir
// into cairn commits, one for each git commit, on the new branch
// import/NAME (NAME the folder's last element). When main holds nothing yet,
// the branch is then merged into main through admission (route "import");
// otherwise it waits for a person to merge it. The hostile-repository
// protections of gitio apply (no file outside the repository is read, git
// runs with no configuration of its own).
//
// It needs a principal (EUNAUTHORIZED); a dir that is not a folder is
// refused (EINVALID); one that is not a git repository, or a branch that
// exists already, gives gitio's error. A merge admission holds or rejects is
// returned in Outcome, not as an error; the branch stays either way.
func (a *App) ImportHistory(ctx context.Context, dir string, opts *HistoryOptions) (*HistoryImport, error) {
	opts = cmp.Or(opts, &HistoryOptions{})
	if err := checkImportDir(dir); err != nil {
		return nil, err
	}
	if _, err := Principal(ctx); err != nil {
		return nil, err // refused before anything is read
	}
	defer a.v.MarkBusy("cairn import " + dir)()
	res := &HistoryImport{Dir: dir, Branch: "import/" + importName(dir)}
	head, err := a.v.Store.Head(ctx, admit.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, fmt.Errorf("import %s: read main: %w", dir, err)
	}
	mainTree, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, fmt.Errorf("import %s: read main: %w", dir, err)
	}
	// main holds nothing (a new vault): the history becomes main's, merged
	// through admission once it is imported.
	res.IntoMain = mainTree == store.EmptyTree
	gopts := &gitio.ImportOptions{Branch: res.Branch, Skip: worktree.Ignored}
	if opts.Progress != nil {
		gopts.Progress = func(done, total int) { opts.Progress(StageHistory, done, total) }
	}
	imp, err := gitio.ImportHistory(ctx, a.v.Store, dir, gopts)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	res.Head, res.Commits, res.Skipped = imp.Head, imp.Commits, imp.Skipped
	if !res.IntoMain {
		return res, nil
	}
	c, err := a.v.Store.ReadCommit(ctx, imp.Head)
	if err != nil {
		return nil, fmt.Errorf("import %s: read the imported head: %w", dir, err)
	}
	res.Outcome, err = a.submit(ctx, submission{
		Route: "import", Base: head, Tree: c.Tree, Parents: []cairn.Hash{imp.Head},
		Message: fmt.Sprintf("import %s: %s of history", importName(dir), importPlural(imp.Commits, "commit")),
		Meta:    map[string]string{"import": dir}, AllowEmpty: true,
	})
	if err != nil {
		return nil, err
	}
	if !res.Outcome.Admitted() {
		return res, nil
	}
	if res.Sync, err = a.v.SyncMain(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// importPlural writes "1 commit" or "2 commits".
func importPlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Exported is what ExportFiles or ExportGit wrote.
type Exported struct {
	Dir string `json:"dir"`
	// Branch is the branch whose history ExportGit wrote; "" for
	// ExportFiles.
	Branch string `json:"branch,omitempty"`
	// Head is the commit exported: the one whose files ExportFiles wrote,
	// the branch's head for ExportGit.
	Head cairn.Hash `json:"head"`
	// Files is the number of files ExportFiles wrote; Commits the number
	// of git commits ExportGit wrote.
	Files   int `json:"files,omitempty"`
	Commits int `json:"commits,omitempty"`
	// Placeholders are the files written as a one-line placeholder for
	// content purged from the vault (for ExportGit, each path at each
	// commit that wrote it). Empty, not nil, when there are none.
	Placeholders []gitio.Placeholder `json:"placeholders"`
}

// placeholders returns ps, or an empty list for none.
func placeholders(ps []gitio.Placeholder) []gitio.Placeholder {
	if ps == nil {
		return []gitio.Placeholder{}
	}
	return ps
}

// checkExportDir refuses a dir that holds anything.
func checkExportDir(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return cairn.Errorf(cairn.EINVALID, "%s is not empty", dir).WithHint("Export into a new folder.")
	}
	return nil
}

// ExportFiles writes the files of revision rev (a branch, tag or commit;
// default main) into dir, which must be new or empty (else EINVALID). A
// revision that does not exist gives ENOTFOUND.
func (a *App) ExportFiles(ctx context.Context, dir, rev string) (*Exported, error) {
	if err := checkExportDir(dir); err != nil {
		return nil, err
	}
	c, err := a.ResolveCommit(ctx, cmp.Or(rev, admit.Branch))
	if err != nil {
		return nil, err
	}
	res, err := gitio.ExportFiles(ctx, a.v.Store, c.Hash, dir)
	if err != nil {
		return nil, err
	}
	return &Exported{Dir: dir, Head: c.Hash, Files: res.Files, Placeholders: placeholders(res.Placeholders)}, nil
}

// ExportOptions configure ExportGit. The zero value exports main.
type ExportOptions struct {
	// Branch is the branch whose history is written. Default main.
	Branch string
	// Progress, when set, is called after each exported commit with stage
	// StageExporting.
	Progress func(stage string, done, total int)
}

// ExportGit writes the history of a branch into dir, which must be new or
// empty (else EINVALID), as a new git repository: one git commit per cairn
// commit; a commit imported from git gets back its author, committer and
// message, any other carries its principal and metadata in trailers. A
// branch that does not exist gives ENOTFOUND.
func (a *App) ExportGit(ctx context.Context, dir string, opts *ExportOptions) (*Exported, error) {
	opts = cmp.Or(opts, &ExportOptions{})
	if err := checkExportDir(dir); err != nil {
		return nil, err
	}
	branch := cmp.Or(opts.Branch, admit.Branch)
	gopts := &gitio.ExportOptions{Branch: branch}
	if opts.Progress != nil {
		gopts.Progress = func(done, total int) { opts.Progress(StageExporting, done, total) }
	}
	res, err := gitio.ExportGit(ctx, a.v.Store, dir, gopts)
	if err != nil {
		return nil, err
	}
	return &Exported{Dir: dir, Branch: branch, Head: res.Head, Commits: res.Commits, Placeholders: placeholders(res.Placeholders)}, nil
}
