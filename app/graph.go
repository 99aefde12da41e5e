package app

import (
	"context"
	"slices"
)

// GraphNode is a page of a Graph.
type GraphNode struct {
	Path    string `json:"path"`
	Title   string `json:"title"`
	Type    string `json:"type,omitempty"`
	Inbound int    `json:"inbound"` // resolved links from other files
	// Depth is the number of links from the focus (a focused graph); 0
	// for the focus, and in a whole graph.
	Depth int `json:"depth"`
}

// Graph is pages and the resolved links between them: each pair of pages
// once, whichever way it links, never a page to itself.
type Graph struct {
	Nodes []GraphNode `json:"nodes"`
	// Edges are pairs of indexes into Nodes, the smaller first.
	Edges [][2]int `json:"edges"`
	// Cut is set when a focused graph stopped growing at MaxGraphNodes.
	Cut bool `json:"cut,omitempty"`
}

// MaxGraphNodes bounds a focused graph.
const MaxGraphNodes = 2000

// Graph returns the view's graph: every page and the links between pages,
// or, with focus (a page's path, id, title or alias), the pages within
// depth links of it either way (depth 1 to 3; at most MaxGraphNodes,
// nearest first) and the links among them. A focus that names no page is
// ENOTFOUND.
func (s *Snapshot) Graph(ctx context.Context, focus string, depth int) (*Graph, error) {
	titles, err := s.ix.Titles(ctx)
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]int, len(titles))
	for i, t := range titles {
		byPath[t.Path] = i
	}
	g := &Graph{}
	if focus == "" {
		g.Nodes = make([]GraphNode, len(titles))
		for i, t := range titles {
			g.Nodes[i] = GraphNode{Path: t.Path, Title: t.Title, Type: t.Type, Inbound: t.Inbound}
		}
		index := func(p string) (int, bool) { i, ok := byPath[p]; return i, ok }
		if err := s.graphEdges(ctx, g, index); err != nil {
			return nil, err
		}
		return g, nil
	}
	start, err := s.ix.Resolve(ctx, focus)
	if err != nil {
		return nil, err
	}
	depth = min(max(depth, 1), 3)
	seen := map[string]int{start: 0}
	order := []string{start}
	frontier := []string{start}
	for d := 1; d <= depth && len(frontier) > 0 && !g.Cut; d++ {
		var next []string
		for _, p := range frontier {
			out, in, err := s.edges(ctx, p)
			if err != nil {
				return nil, err
			}
			for _, q := range slices.Concat(out, in) {
				if _, ok := seen[q]; ok {
					continue
				}
				if _, page := byPath[q]; !page {
					continue // an attachment
				}
				if len(order) >= MaxGraphNodes {
					g.Cut = true
					break
				}
				seen[q] = d
				order = append(order, q)
				next = append(next, q)
			}
		}
		frontier = next
	}
	local := make(map[string]int, len(order))
	for i, p := range order {
		local[p] = i
		n := GraphNode{Path: p, Depth: seen[p]}
		if ti, ok := byPath[p]; ok {
			t := titles[ti]
			n.Title, n.Type, n.Inbound = t.Title, t.Type, t.Inbound
		}
		g.Nodes = append(g.Nodes, n)
	}
	index := func(p string) (int, bool) { i, ok := local[p]; return i, ok }
	if err := s.graphEdges(ctx, g, index); err != nil {
		return nil, err
	}
	return g, nil
}

// graphEdges adds the links among g's nodes, each pair once.
func (s *Snapshot) graphEdges(ctx context.Context, g *Graph, index func(string) (int, bool)) error {
	seen := map[[2]int]bool{}
	for i, n := range g.Nodes {
		links, err := s.ix.Links(ctx, n.Path)
		if err != nil {
			return err
		}
		for _, l := range links {
			j, ok := index(l.To)
			if !ok || j == i {
				continue
			}
			e := [2]int{min(i, j), max(i, j)}
			if !seen[e] {
				seen[e] = true
				g.Edges = append(g.Edges, e)
			}
		}
	}
	return nil
}
