package markdown_test

import (
	"fmt"

	"cairn/markdown"
)

func ExampleParse() {
	src := []byte(`---
title: Attention Mechanism
aliases: Attention, self-attention
---
# Attention

Weighs values by how well their keys match a query. ^def

See [[transformer#Architecture|the architecture]], ![[diagram.png]] and
[the paper](../raw/attention.pdf). Not ` + "`[[code]]`" + `.
`)
	p := markdown.Parse("concepts/attention.md", src)
	fmt.Println(p.ID, "|", p.Title, "|", p.TitleSource, "|", p.Aliases, "|", p.BlockIDs)
	for _, l := range p.Links {
		fmt.Printf("%d:%d %s %q heading=%q path=%q\n", l.Line, l.Col, l.Kind, l.Target, l.Heading, l.Path)
	}
	// Output:
	// concepts/attention | Attention Mechanism | frontmatter | [Attention self-attention] | [def]
	// 9:5 wiki "transformer" heading="Architecture" path=""
	// 9:52 embed "diagram.png" heading="" path=""
	// 10:1 markdown "../raw/attention.pdf" heading="" path="raw/attention.pdf"
}

func ExampleResolver_Resolve() {
	pages := []*markdown.Page{
		markdown.Parse("concepts/attention.md", []byte("---\ntitle: Attention Mechanism\n---\n")),
		markdown.Parse("a/notes.md", nil),
		markdown.Parse("b/notes.md", nil),
		markdown.Parse("x.md", []byte("# Shared\n")),
		markdown.Parse("y.md", []byte("# Shared\n")),
	}
	r := markdown.NewResolver(pages, []string{"assets/diagram.png"})
	from := markdown.Parse("index.md", []byte("[[attention mechanism]] [[notes]] [[shared]] ![[diagram.png]] [[missing]]"))
	for _, l := range from.Links {
		res := r.Resolve(from, l)
		fmt.Println(l.Raw, res.Status, res.Path, res.Step, res.Candidates)
	}
	// From b/, [[notes]] is the page in b/.
	inB := markdown.Parse("b/index.md", []byte("[[notes]]"))
	res := r.Resolve(inB, inB.Links[0])
	fmt.Println(inB.Links[0].Raw, "in b/:", res.Status, res.Path, res.Step, res.Candidates)
	// Output:
	// [[attention mechanism]] resolved concepts/attention.md title []
	// [[notes]] resolved a/notes.md stem [a/notes.md b/notes.md]
	// [[shared]] ambiguous  title [x.md y.md]
	// ![[diagram.png]] resolved assets/diagram.png stem []
	// [[missing]] broken  none []
	// [[notes]] in b/: resolved b/notes.md stem []
}

func ExamplePlainText() {
	fmt.Printf("%q\n", markdown.PlainText([]byte("---\ntitle: T\n---\n# Head\n\nSee [[Note|the note]] and [a link](x.md). %%hidden%%\n")))
	// Output:
	// "Head\nSee the note and a link. \n"
}
