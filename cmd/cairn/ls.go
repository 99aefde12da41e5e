package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/vault"
)

// lsEntry is one line of cairn ls: a file, or a folder with what it holds.
type lsEntry struct {
	ID    string     `json:"id"` // the path; a folder's ends in "/"
	Path  string     `json:"path"`
	Kind  string     `json:"kind"` // "file" or "folder"
	Size  int64      `json:"size"` // a folder's: of all the files in it
	Files int        `json:"files,omitempty"`
	Blob  cairn.Hash `json:"blob,omitzero"`
	Mode  string     `json:"mode,omitempty"` // "executable" for an executable file
}

func (a *cli) lsCmd() *cobra.Command {
	var recursive, long bool
	cmd := &cobra.Command{
		Use:   "ls [REF:][PATH]",
		Short: "List the files and folders of a folder as it is at a commit",
		Long: `Ls lists what the folder PATH holds at REF (a branch, tag, commit hash or
prefix, main~3...; default: the head of the working tree's branch), folders
first marked with a slash: the files and folders at the top of the vault
without PATH. A PATH that is a file lists that file. With --recursive it lists
every file below PATH; with --long, sizes (a folder's: of all it holds) and
executable files. Paths match whatever their case, as in the store.`,
		Example: `  cairn ls
  cairn ls notes/
  cairn ls main~3:summaries -l
  cairn ls v1: --recursive`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, t, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			rev, dir, hasRev := strings.Cut(arg, ":")
			if !hasRev {
				rev, dir = branchOf(t), arg
			}
			out, c, err := a.ls(v, rev, dir, recursive)
			switch {
			case cairn.ErrorCode(err) == cairn.ENOTFOUND && !hasRev && dir != "":
				// Not a path: perhaps a revision, as in cairn show.
				if rout, rc, rerr := a.ls(v, arg, "", recursive); rerr == nil {
					out, c, err = rout, rc, nil
				}
			case cairn.ErrorCode(err) == cairn.ENOTFOUND && hasRev:
				// No such revision: perhaps a path with a colon in it.
				if rout, rc, rerr := a.ls(v, branchOf(t), arg, recursive); rerr == nil {
					out, c, err = rout, rc, nil
				}
			}
			if err != nil {
				return err
			}
			res := items(out)
			res["commit"] = c.Hash
			return a.emit(res, func(w io.Writer) {
				for _, e := range out {
					if !long {
						fmt.Fprintln(w, e.ID)
						continue
					}
					what := humanize.IBytes(uint64(e.Size))
					switch {
					case e.Kind == "folder":
						what += fmt.Sprintf(", %d files", e.Files)
					case e.Mode != "":
						what += ", " + e.Mode
					}
					fmt.Fprintf(w, "%-24s %s\n", what, e.ID)
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "list every file below the folder")
	cmd.Flags().BoolVarP(&long, "long", "l", false, "give sizes, file counts and executable files")
	return cmd
}

// ls lists the folder dir ("" for the top) of the commit rev, or the file
// dir names: folders first, with the count and size of what they hold.
func (a *cli) ls(v *vault.Vault, rev, dir string, recursive bool) ([]lsEntry, *cairn.Commit, error) {
	c, err := commitAt(a, v, rev)
	if err != nil {
		return nil, nil, err
	}
	dir = strings.Trim(dir, "/")
	if dir == "." {
		dir = ""
	}
	file := func(e cairn.Entry) lsEntry {
		le := lsEntry{ID: e.Path, Path: e.Path, Kind: "file", Size: e.Size, Blob: e.Blob}
		if e.Mode == cairn.ModeExecutable {
			le.Mode = "executable"
		}
		return le
	}
	prefix := ""
	if dir != "" {
		if _, err := cairn.CleanPath(dir); err != nil {
			return nil, nil, err
		}
		e, err := v.Store.GetFold(a.ctx, c.Tree, dir)
		if err == nil {
			return []lsEntry{file(e)}, c, nil
		}
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, nil, err
		}
		prefix = dir + "/"
	}
	depth := strings.Count(prefix, "/")
	var files, folders []lsEntry
	for e, err := range v.Store.Files(a.ctx, c.Tree, prefix) {
		if err != nil {
			return nil, nil, err
		}
		segs := strings.SplitN(e.Path, "/", depth+2)
		if recursive || len(segs) == depth+1 {
			files = append(files, file(e))
			continue
		}
		// The folder's own spelling, which may differ from the argument's
		// in case. Files of one folder come together: keys are sorted.
		name := strings.Join(segs[:depth+1], "/") + "/"
		if n := len(folders); n == 0 || folders[n-1].ID != name {
			folders = append(folders, lsEntry{ID: name, Path: strings.TrimSuffix(name, "/"), Kind: "folder"})
		}
		f := &folders[len(folders)-1]
		f.Files++
		f.Size += e.Size
	}
	out := append(folders, files...)
	if len(out) == 0 && dir != "" {
		return nil, nil, cairn.Errorf(cairn.ENOTFOUND, "%s is neither a file nor a folder at %s", dir, c.Hash.Short()).
			WithHint("cairn ls " + rev + ": lists the top of the vault; paths match whatever their case.")
	}
	return out, c, nil
}
