package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"cairn/app"
	"cairn/index"
	"cairn/lint"
)

func (a *cli) searchCmd() *cobra.Command {
	var q index.SearchQuery
	var color string
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Full-text search of main's pages, best first",
		Long: `Search finds the pages of main that contain every word of QUERY, with a
snippet around the matches: first the pages whose title holds every word,
then shorter pages first (BM25 with each word counted once). QUERY may hold
"quoted phrases", prefixes like garden*, and type:T or folder:F filters.

The snippet is the page's text as written; on a terminal the matches are
coloured (--color). With --json each result has the snippet and its matches,
the [start, end) byte offsets of the matching words in it.`,
		Example: `  cairn search printing press
  cairn search '"movable type"' --type concept
  cairn search ink* folder:summaries`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			colored, err := a.colored(color)
			if err != nil {
				return err
			}
			q.Text = strings.Join(args, " ")
			res, err := ap.Search(a.ctx, q)
			if err != nil {
				return err
			}
			return a.emit(items(res), func(w io.Writer) {
				if len(res) == 0 {
					fmt.Fprintln(w, "No page matches.")
				}
				for _, s := range res {
					typ := ""
					if s.Type != "" {
						typ = " [" + s.Type + "]"
					}
					fmt.Fprintf(w, "%s%s  (%s)\n    %s\n", s.Title, typ, s.Path, colorMatches(s.Snippet, s.Matches, colored))
				}
			})
		},
	}
	cmd.Flags().StringVar(&color, "color", "auto", "colour the matches: auto (on a terminal), always, never")
	cmd.Flags().StringVar(&q.Type, "type", "", "only pages of this type")
	cmd.Flags().StringVar(&q.Folder, "folder", "", "only pages under this folder")
	cmd.Flags().IntVarP(&q.Limit, "limit", "n", 10, "at most this many results (up to 100)")
	return cmd
}

func (a *cli) linksCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "links PAGE",
		Short: "List a page's links and where each leads",
		Long: `Links lists the links of PAGE (a path, id, title or alias) on main, in order,
with where each resolves: a page, broken, or ambiguous (with the candidates).
Where several files share the name a link gives, it leads where Obsidian sends
it: to the one in PAGE's folder, else to the shortest path, and the others it
was chosen among are listed (the first ten in byte order, then how many more).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.links(args[0], false) },
	}
}

func (a *cli) backlinksCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "backlinks PAGE",
		Short: "List the links from other pages to a page",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return a.links(args[0], true) },
	}
}

func (a *cli) links(ref string, back bool) error {
	ap, err := a.service()
	if err != nil {
		return err
	}
	defer ap.Close()
	read := ap.Links
	if back {
		read = func(ctx context.Context, page string) ([]index.LinkInfo, error) {
			p, err := ap.Backlinks(ctx, page, app.BacklinkOptions{})
			if err != nil {
				return nil, err
			}
			return p.Links, nil
		}
	}
	ls, err := read(a.ctx, ref)
	if err != nil {
		return err
	}
	return a.emit(items(ls), func(w io.Writer) {
		if len(ls) == 0 {
			fmt.Fprintln(w, "No links.")
		}
		for _, l := range ls {
			if back {
				fmt.Fprintf(w, "%s:%d  %s\n", l.From, l.Line, l.Raw)
				continue
			}
			switch l.Status {
			case "resolved":
				note := ""
				if len(l.Candidates) > 1 {
					note = "  (the shortest of " + l.CandidateList() + ")"
				}
				if l.MissingHeading {
					note += "  (no such heading)"
				}
				fmt.Fprintf(w, "%-40s -> %s%s\n", l.Raw, l.To, note)
			case "ambiguous":
				fmt.Fprintf(w, "%-40s -> ambiguous: %s\n", l.Raw, l.CandidateList())
			default:
				fmt.Fprintf(w, "%-40s -> broken\n", l.Raw)
			}
		}
	})
}

func (a *cli) lintCmd() *cobra.Command {
	var at, rule, page, min string
	var strict bool
	cmd := &cobra.Command{
		Use:   "lint [--at REF]",
		Short: "List lint findings (of main, or of any commit or branch)",
		Long: `Lint lists the findings of the lint rules: broken, ambiguous and
missing-heading links, orphans and pages unreachable from index.md, missing
or invalid titles, types and sources, duplicate titles, malformed frontmatter,
invalid encoding, misplaced pages, non-Markdown files, case collisions. Each
finding has a rule, a severity (error, warning, info), a page and a subject.

With --at, the findings of another commit or branch, computed without
indexing it. With --strict, exit 1 when any finding is a warning or an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			if min != "" && lint.Severity(min).Rank() == 0 {
				return usageError("--min must be error, warning or info")
			}
			rep, err := ap.Lint(a.ctx, app.LintOptions{At: at, Page: page, Rule: rule, Min: lint.Severity(min)})
			if err != nil {
				return err
			}
			if strict && rep.Errors+rep.Warnings > 0 {
				a.code = exitRefused
			}
			type item struct {
				ID string `json:"id"`
				lint.Finding
			}
			var out []item
			for _, f := range rep.Findings {
				out = append(out, item{ID: f.ID(), Finding: f})
			}
			res := items(out)
			res["errors"], res["warnings"], res["infos"] = rep.Errors, rep.Warnings, rep.Infos
			return a.emit(res, func(w io.Writer) {
				for _, f := range rep.Findings {
					fmt.Fprintf(w, "%-8s %-22s %s: %s\n", f.Severity, f.Rule, f.Page, f.Message)
				}
				fmt.Fprintf(w, "%d errors, %d warnings, %d infos\n", rep.Errors, rep.Warnings, rep.Infos)
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "lint this commit, branch or tag instead of main")
	cmd.Flags().StringVar(&rule, "rule", "", "only this rule")
	cmd.Flags().StringVar(&page, "page", "", "only this file (a path)")
	cmd.Flags().StringVar(&min, "min", "", "only findings at least this severe: error, warning or info")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 when a finding is a warning or an error")
	return cmd
}

// colorMatches colours the matches of a snippet (byte offsets, in order)
// as grep does, bold red.
func colorMatches(snippet string, matches [][2]int, on bool) string {
	if !on {
		return snippet
	}
	var b strings.Builder
	pos := 0
	for _, m := range matches {
		b.WriteString(snippet[pos:m[0]])
		b.WriteString("\x1b[01;31m" + snippet[m[0]:m[1]] + "\x1b[0m")
		pos = m[1]
	}
	b.WriteString(snippet[pos:])
	return b.String()
}
