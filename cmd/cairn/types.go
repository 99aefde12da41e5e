package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"cairn/lint"
	"cairn/schema"
)

func (a *cli) typesCmd() *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "types [--at REF]",
		Short: "List the types the vault declares, with their page counts",
		Long: `Types lists the types the vault declares: each is a file in types/
(types/person.md, or types/person.yaml) whose frontmatter is the schema of
the pages whose type it names. For each, how many pages are of it and how
many break it. A declaration with errors is marked broken: its pages are
not checked until it is fixed.

The schema gate checks every change against the types on every route; see
docs/types.md for the vocabulary.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			ts, err := ap.Types(a.ctx, at)
			if err != nil {
				return err
			}
			return a.emit(items(ts), func(w io.Writer) {
				if len(ts) == 0 {
					fmt.Fprintln(w, "no types declared; declare one in types/NAME.md (see docs/types.md)")
					return
				}
				for _, t := range ts {
					extra := ""
					if t.Extends != "" {
						extra = " extends " + t.Extends
					}
					if t.Broken {
						extra += " (broken: see cairn types show " + t.Name + ")"
					}
					fmt.Fprintf(w, "%-20s %6d pages %5d breaking  %s%s\n", t.Name, t.Pages, t.Breaking, t.Path, extra)
				}
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the types of this commit, branch or tag instead of main")
	cmd.AddCommand(a.typesShowCmd())
	return cmd
}

func (a *cli) typesShowCmd() *cobra.Command {
	var at string
	var limit int
	var jsonSchema bool
	cmd := &cobra.Command{
		Use:   "show TYPE [--at REF] [--schema]",
		Short: "Print a type's fields and the pages that break it",
		Long: `Show prints a declared type with what it inherits: its required and
recommended fields, each field's declaration, its conditions and folder;
then the declaration's own errors and the findings of the pages that break
it (at most --limit). With --schema, only the type's JSON Schema 2020-12,
which an agent or a model in JSON mode can produce conforming pages from.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			d, err := ap.Type(a.ctx, at, args[0], limit)
			if err != nil {
				return err
			}
			if jsonSchema {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(d.Schema)
			}
			return a.emit(d, func(w io.Writer) { printType(w, d.Type); printTypeFindings(w, d.Pages, d.Problems, d.Findings) })
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the type as this commit, branch or tag declares it")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many findings of its pages")
	cmd.Flags().BoolVar(&jsonSchema, "schema", false, "print only the type's JSON Schema")
	return cmd
}

// printType prints a type's declaration for people.
func printType(w io.Writer, t *schema.Type) {
	fmt.Fprintf(w, "type %s (%s)", t.Name, t.Path)
	if t.Extends != "" {
		fmt.Fprintf(w, " extends %s", t.Extends)
	}
	fmt.Fprintln(w)
	if t.Title != "" && t.Title != t.Name {
		fmt.Fprintf(w, "  title:      %s\n", t.Title)
	}
	if t.Folder != "" {
		fmt.Fprintf(w, "  folder:     %s\n", t.Folder)
	}
	if t.Closed {
		fmt.Fprintln(w, "  closed:     no fields beyond the declared ones")
	}
	if len(t.Requires) > 0 {
		fmt.Fprintf(w, "  requires:   %s\n", strings.Join(t.Requires, ", "))
	}
	if len(t.Recommends) > 0 {
		fmt.Fprintf(w, "  recommends: %s\n", strings.Join(t.Recommends, ", "))
	}
	if len(t.Fields) > 0 {
		fmt.Fprintln(w, "  fields:")
		for _, f := range t.Fields {
			fmt.Fprintf(w, "    %-16s %s\n", f.Name, valueText(&f.Value, f.Items))
		}
	}
	for _, c := range t.When {
		is := "is set"
		if len(c.Is) > 0 {
			vs := make([]string, len(c.Is))
			for i, v := range c.Is {
				vs[i] = fmt.Sprint(v)
			}
			is = "is " + strings.Join(vs, " or ")
		}
		fmt.Fprintf(w, "  when %s %s:", c.Field, is)
		if len(c.Requires) > 0 {
			fmt.Fprintf(w, " requires %s", strings.Join(c.Requires, ", "))
		}
		if len(c.Recommends) > 0 {
			fmt.Fprintf(w, " recommends %s", strings.Join(c.Recommends, ", "))
		}
		fmt.Fprintln(w)
	}
}

// valueText says what a value (with its items, for a list) is declared to
// be, in the declaration's words.
func valueText(f *schema.Value, items *schema.Value) string {
	var parts []string
	typ := f.Type
	switch {
	case f.Type == schema.List && items != nil:
		typ = "list of " + valueText(items, nil)
	case f.Type == schema.Link && f.To != "":
		typ = "link to " + f.To
	case typ == "":
		typ = "any"
	}
	parts = append(parts, typ)
	if f.Format != "" {
		parts = append(parts, "format "+f.Format)
	}
	if f.Pattern != "" {
		parts = append(parts, "pattern "+f.Pattern)
	}
	if f.Min != nil {
		parts = append(parts, fmt.Sprintf("min %v", *f.Min))
	}
	if f.Max != nil {
		parts = append(parts, fmt.Sprintf("max %v", *f.Max))
	}
	if f.MinLength != nil {
		parts = append(parts, fmt.Sprintf("min_length %d", *f.MinLength))
	}
	if f.MaxLength != nil {
		parts = append(parts, fmt.Sprintf("max_length %d", *f.MaxLength))
	}
	if len(f.Enum) > 0 {
		parts = append(parts, fmt.Sprintf("one of %v", f.Enum))
	}
	return strings.Join(parts, ", ")
}

// printTypeFindings prints a declaration's errors and its pages' findings.
func printTypeFindings(w io.Writer, pages int, problems, findings []lint.Finding) {
	for _, p := range problems {
		fmt.Fprintf(w, "  error in the declaration: %s\n", p.Message)
	}
	fmt.Fprintf(w, "%d pages of the type, %d findings\n", pages, len(findings))
	for _, f := range findings {
		fmt.Fprintf(w, "%-8s %-20s %s: %s\n", f.Severity, f.Rule, f.Page, f.Message)
	}
}
