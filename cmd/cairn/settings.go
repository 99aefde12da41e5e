package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"cairn/admit"
)

// settingNames lists the keys of cairn.yaml but the verdicts, as the
// admission policy knows them.
func settingNames() string {
	var keys []string
	for _, s := range (&admit.Policy{}).Settings() {
		if !strings.HasPrefix(s.Key, "verdicts.") {
			keys = append(keys, s.Key)
		}
	}
	return strings.Join(keys, ", ")
}

// fill breaks text into lines of at most width bytes, between words.
func fill(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func (a *cli) settingsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "List the vault's settings (cairn.yaml): the agent, limits, paths, the verdict table",
		Long: `Settings lists every key of cairn.yaml, the vault's contract, with its value
and default. cairn.yaml is versioned with the vault and agents may not change
it. cairn settings set KEY VALUE edits it as your commit on main (comments and
order are kept); an empty VALUE removes the key, so its default applies.

` + fill("The keys: "+settingNames()+", and verdicts.RULE.agent|person (admit, hold or reject) for the rules protected, contract, outside, file-type, misplaced-page, deletion, rename and lint. Values are checked against what each key accepts, which the error names.", 78),
		Example: `  cairn settings set agent.runtime command
  cairn settings set agent.command 'my-agent --model local'
  cairn settings set verdicts.deletion.agent reject`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			settings, err := c.Settings(a.ctx)
			if err != nil {
				return err
			}
			return a.emit(items(settings), func(w io.Writer) {
				for _, s := range settings {
					mark := " "
					if s.Value != s.Default {
						mark = "*"
					}
					val := cmpOr(s.Value, `""`)
					if r := []rune(val); len(r) > 30 {
						val = string(r[:29]) + "…"
					}
					fmt.Fprintf(w, "%s %-30s %-30s %s\n", mark, s.Key, val, s.Help)
				}
				fmt.Fprintln(w, "(* differs from the default; cairn settings get KEY prints a whole value)")
			})
		},
	}
	cmd.AddCommand(a.settingsGetCmd(), a.settingsSetCmd())
	return cmd
}

func (a *cli) settingsGetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get KEY",
		Short: "Print one setting",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			s, err := c.Setting(a.ctx, args[0])
			if err != nil {
				return err
			}
			val := s.Value
			return a.emit(items([]admit.Setting{{Key: args[0], Value: val}}), func(w io.Writer) { fmt.Fprintln(w, val) })
		},
	}
}

func (a *cli) settingsSetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change one setting, as your commit on main",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.SetSetting(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			if res.Unchanged {
				return a.emit(items([]admit.Setting{{Key: args[0], Value: args[1]}}), func(w io.Writer) {
					fmt.Fprintf(w, "%s is %q already.\n", args[0], args[1])
				})
			}
			out, rep := res.Outcome, res.Sync
			if !out.Admitted() {
				return a.emit(items([]map[string]any{outcomeItem(out)}), func(w io.Writer) { a.refused(w, out) })
			}
			return a.emit(items([]admit.Setting{{Key: args[0], Value: args[1]}}), func(w io.Writer) {
				fmt.Fprintf(w, "Set %s to %q (commit %s).\n", args[0], args[1], out.Commit.Hash.Short())
				printSync(w, rep)
			})
		},
	}
}
