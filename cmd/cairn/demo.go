package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"cairn/cmd/cairn/sample"
)

func (a *app) demoCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "A narrated tour in a new vault: history, search, links, lint, branches, merges",
		Long: `Demo builds a vault from a bundled sample (a small research brain about early
printing) in a new folder and runs the commands a person would, explaining
each: adopting a folder, lint, an edit and its commit, search, links and
backlinks, history, a branch in a second working tree, a structural merge,
and a conflicting merge that is refused. It needs no network and no keys.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.json {
				return usageError("demo is a narrated tour; it has no JSON output")
			}
			if dir == "" {
				var err error
				if dir, err = os.MkdirTemp("", "cairn-demo-"); err != nil {
					return err
				}
			} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return usageError("%s is not empty; demo needs a new folder", dir)
			}
			return a.demo(dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "where to build the demo (default: a new temporary folder)")
	return cmd
}

// tour runs commands against a vault folder and narrates.
type tour struct {
	a    *app
	w    io.Writer
	step int
}

func (t *tour) say(text string) {
	fmt.Fprintf(t.w, "\n%s\n", strings.TrimSpace(text))
}

func (t *tour) section(title string) {
	t.step++
	fmt.Fprintf(t.w, "\n== %d. %s ==\n", t.step, title)
}

// run prints and runs one cairn command in folder dir; it fails when the
// exit code is not want.
func (t *tour) run(dir string, want int, args ...string) error {
	fmt.Fprintf(t.w, "\n$ cairn %s\n", strings.Join(quote(args), " "))
	all := append([]string{"-C", dir}, args...)
	code := Main(t.a.ctx, all, strings.NewReader(""), t.w, t.w)
	if code != want {
		return fmt.Errorf("demo: cairn %s exited %d, expected %d", strings.Join(args, " "), code, want)
	}
	return nil
}

func quote(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		if strings.ContainsAny(s, " \"'") {
			s = "'" + s + "'"
		}
		out[i] = s
	}
	return out
}

// edit changes a file as a person would in an editor.
func (t *tour) edit(dir, path string, fn func(string) string) error {
	p := filepath.Join(dir, filepath.FromSlash(path))
	data, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	fmt.Fprintf(t.w, "\n(editing %s)\n", path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(fn(string(data))), 0o644)
}

func (a *app) demo(root string) error {
	t := &tour{a: a, w: a.stdout}
	vaultDir := filepath.Join(root, "vault")
	draftDir := filepath.Join(root, "draft")
	if err := writeSample(vaultDir); err != nil {
		return err
	}
	if os.Getenv("CAIRN_USER") == "" && a.as == "" {
		os.Setenv("CAIRN_USER", "demo")
	}
	steps := []func() error{
		func() error {
			t.section("A folder becomes a vault")
			t.say(`The folder ` + vaultDir + ` holds a small research brain in the Eva
layout: an index, a log, entities, concepts, source summaries and analyses,
18 pages linked with Obsidian's [[wikilinks]], plus their raw sources. cairn
init adopts it as the first commit; the folder stays plain Markdown.`)
			return t.run(vaultDir, exitOK, "init", "-m", "adopt the printing brain")
		},
		func() error {
			t.section("Lint: what needs attention")
			t.say(`Every finding has a rule, a severity, a page and a subject. Two things need
a look: a link to a page nobody has written yet, and a page without a type.`)
			return t.run(vaultDir, exitOK, "lint")
		},
		func() error {
			t.section("An edit, its status and its commit")
			err := t.edit(vaultDir, "entities/william-caxton.md", func(s string) string {
				return strings.Replace(s, "title: William Caxton\n", "title: William Caxton\ntype: entity\n", 1)
			})
			if err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "status"); err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "commit", "-m", "Give William Caxton a type"); err != nil {
				return err
			}
			t.say(`The index follows every commit in the same transaction, so lint is current:`)
			return t.run(vaultDir, exitOK, "lint")
		},
		func() error {
			t.section("Search, links and backlinks")
			t.say(`Full-text search ranks pages whose titles hold the words first, then by BM25.`)
			if err := t.run(vaultDir, exitOK, "search", "-n", "3", "movable type"); err != nil {
				return err
			}
			t.say(`Links resolve the way Obsidian resolves them (path, file name, title,
alias), case-insensitively; an ambiguous name is reported, never guessed.`)
			if err := t.run(vaultDir, exitOK, "links", "Movable type"); err != nil {
				return err
			}
			return t.run(vaultDir, exitOK, "backlinks", "Gutenberg")
		},
		func() error {
			t.section("History")
			if err := t.run(vaultDir, exitOK, "log"); err != nil {
				return err
			}
			return t.run(vaultDir, exitOK, "diff", "main~1", "main")
		},
		func() error {
			t.section("A branch in a second working tree, and a structural merge")
			t.say(`A draft branch gets its own folder. There, the missing page is written and
listed in index.md; meanwhile, on main, someone adds another line to the same
list in index.md.`)
			if err := t.run(vaultDir, exitOK, "branch", "draft"); err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "worktree", "add", draftDir, "draft"); err != nil {
				return err
			}
			err := t.edit(draftDir, "concepts/type-foundry.md", func(string) string {
				return "---\ntitle: Type foundry\ntype: concept\nupdated: 2026-10-20\n---\n# Type foundry\n\n" +
					"A type foundry cast metal type for sale to printers, a trade that split off\n" +
					"from printing itself as [[Movable type|movable type]] spread.\n"
			})
			if err == nil {
				err = t.edit(draftDir, "index.md", func(s string) string {
					return strings.Replace(s, "## Concepts\n", "## Concepts\n- [[concepts/type-foundry|Type foundry]] — the trade that cast type for printers\n", 1)
				})
			}
			if err != nil {
				return err
			}
			if err := t.run(draftDir, exitOK, "commit", "-m", "Write the type foundry page"); err != nil {
				return err
			}
			err = t.edit(vaultDir, "index.md", func(s string) string {
				return strings.Replace(s, "## Entities\n", "## Entities\n- [[entities/mainz|Mainz]] — listed again for the merge demo\n", 1)
			})
			if err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "commit", "-m", "Add a line to the index"); err != nil {
				return err
			}
			t.say(`Both sides changed index.md. git would see two edits near each other; cairn
merges Markdown structurally: frontmatter field by field, and list items
added on both sides as a union.`)
			if err := t.run(vaultDir, exitOK, "merge", "draft"); err != nil {
				return err
			}
			return t.run(vaultDir, exitOK, "lint")
		},
		func() error {
			t.section("A conflict is refused, and nothing is applied")
			t.say(`Now both sides rewrite the same sentence of concepts/paper.md differently.
cairn lists the conflict with both versions and changes nothing: no silent
pick, no conflict markers in your files.`)
			change := func(to string) func(string) string {
				return func(s string) string {
					lines := strings.Split(s, "\n")
					for i, l := range lines {
						if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") && !strings.Contains(l, ":") && i > 6 {
							lines[i] = to
							break
						}
					}
					return strings.Join(lines, "\n")
				}
			}
			if err := t.edit(draftDir, "concepts/paper.md", change("Paper reached Europe through the Islamic world.")); err != nil {
				return err
			}
			if err := t.run(draftDir, exitOK, "commit", "-m", "Reword the paper page (draft)"); err != nil {
				return err
			}
			if err := t.edit(vaultDir, "concepts/paper.md", change("Paper came to Europe by way of Spain and Italy.")); err != nil {
				return err
			}
			if err := t.run(vaultDir, exitOK, "commit", "-m", "Reword the paper page (main)"); err != nil {
				return err
			}
			if err := t.run(vaultDir, exitRefused, "merge", "draft"); err != nil {
				return err
			}
			return t.run(vaultDir, exitOK, "log", "-n", "2")
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	t.say(fmt.Sprintf(`That is the tour. The vault is in %s (open it in Obsidian if you like)
and the draft in %s. Try cairn --help, or cairn -C %s search paper.`, vaultDir, draftDir, vaultDir))
	return nil
}

// writeSample copies the bundled sample vault into dir.
func writeSample(dir string) error {
	return fs.WalkDir(sample.Vault, "vault", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "vault")))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := sample.Vault.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
