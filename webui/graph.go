package webui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

// graphRoutes registers the graph: its page, its data, and the stream of
// the pages agents write now.
func (u *UI) graphRoutes() {
	u.handle("GET /graph", auth.Read, u.graph)
	u.handle("GET /graph/data", auth.Read, u.graphData)
	u.handle("GET /graph/activity", auth.Read, u.graphActivity)
}

// graph shows the graph page; its script draws /graph/data.
func (u *UI) graph(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	data := graphDataURL(q.Get("focus"), q.Get("depth"))
	return u.show(w, r, s, "graph", "Graph", "graph", map[string]any{"Focus": q.Get("focus"), "Data": data})
}

// graphDataURL is the address of the graph's data.
func graphDataURL(focus, depth string) string {
	if focus == "" {
		return "/graph/data"
	}
	return "/graph/data?focus=" + url.QueryEscape(focus) + "&depth=" + url.QueryEscape(cmp.Or(depth, "2"))
}

// graphJSON is the graph as the page's script reads it: nodes with their
// places, edges as pairs of node indexes.
type graphJSON struct {
	Nodes []nodeJSON `json:"nodes"`
	Edges [][2]int   `json:"edges"`
	Cut   bool       `json:"cut,omitempty"`
	Focus string     `json:"focus,omitempty"`
}

type nodeJSON struct {
	Path   string  `json:"p"`
	Title  string  `json:"t"`
	Type   string  `json:"y,omitempty"`
	Folder string  `json:"f"`
	X      float64 `json:"x"`
	Y      float64 `json:"v"`
	R      float64 `json:"r"`
	Depth  int     `json:"d,omitempty"`
}

// graphKey names one layout of one tree.
type graphKey struct {
	tree         cairn.Hash
	focus, depth string
}

// graphData answers the graph of main (or of ?focus= and ?depth=), laid
// out: the whole vault clustered by top folder, a neighbourhood in rings
// around its page. A layout is kept for the tree it was made of.
func (u *UI) graphData(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	focus, depthText := strings.TrimSpace(q.Get("focus")), q.Get("depth")
	depth := 2
	if depthText != "" {
		d, err := strconv.Atoi(depthText)
		if err != nil || d < 1 || d > 3 {
			return cairn.Errorf(cairn.EINVALID, "depth %q is not 1, 2 or 3", depthText).WithHint("Show the pages 1, 2 or 3 links away.")
		}
		depth = d
	}
	var out []byte
	err := u.app.View("").Read(r.Context(), func(snap *app.Snapshot) error {
		key := graphKey{snap.Tree, focus, strconv.Itoa(depth)}
		if focus == "" {
			key.depth = "" // the whole vault has no depth
		}
		if b, ok := u.graphs.Get(key); ok {
			out = b
			return nil
		}
		g, err := snap.Graph(r.Context(), focus, depth)
		if err != nil {
			return err
		}
		gj := layout(g, focus != "")
		if focus != "" && len(g.Nodes) > 0 {
			gj.Focus = g.Nodes[0].Path
		}
		if out, err = json.Marshal(gj); err != nil {
			return err
		}
		u.graphs.Add(key, out)
		return nil
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(out)
	return err
}

// golden is the golden angle, which spreads points on a spiral evenly.
var golden = math.Pi * (3 - math.Sqrt(5))

// spacing is the distance between neighbouring pages in a layout.
const spacing = 14.0

// layout places g's pages. A whole vault is clustered by top folder: each
// folder a disc of its pages on a sunflower spiral, the most linked in the
// middle, and the discs on a spiral of their own, the largest first. A
// neighbourhood is rings around its page, one per link of distance.
func layout(g *app.Graph, focused bool) graphJSON {
	out := graphJSON{Nodes: make([]nodeJSON, len(g.Nodes)), Edges: g.Edges, Cut: g.Cut}
	if out.Edges == nil {
		out.Edges = [][2]int{}
	}
	for i, n := range g.Nodes {
		folder, _, ok := strings.Cut(n.Path, "/")
		if !ok {
			folder = ""
		}
		out.Nodes[i] = nodeJSON{Path: n.Path, Title: cmp.Or(n.Title, n.Path), Type: n.Type, Folder: folder, Depth: n.Depth,
			R: math.Min(3+math.Sqrt(float64(n.Inbound)), 16)}
	}
	if focused {
		rings := map[int][]int{}
		for i, n := range g.Nodes {
			rings[n.Depth] = append(rings[n.Depth], i)
		}
		for d, ids := range rings {
			slices.SortFunc(ids, func(a, b int) int {
				return cmp.Or(cmp.Compare(out.Nodes[a].Folder, out.Nodes[b].Folder), cmp.Compare(out.Nodes[a].Path, out.Nodes[b].Path))
			})
			radius := float64(d) * math.Max(120, float64(len(ids))*spacing/(2*math.Pi))
			for k, i := range ids {
				a := 2 * math.Pi * float64(k) / float64(len(ids))
				out.Nodes[i].X, out.Nodes[i].Y = radius*math.Cos(a), radius*math.Sin(a)
			}
		}
		return out
	}
	clusters := map[string][]int{}
	for i, n := range out.Nodes {
		clusters[n.Folder] = append(clusters[n.Folder], i)
	}
	names := make([]string, 0, len(clusters))
	for f := range clusters {
		names = append(names, f)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(clusters[b]), len(clusters[a])), cmp.Compare(a, b))
	})
	placed := 0.0
	for k, f := range names {
		ids := clusters[f]
		slices.SortFunc(ids, func(a, b int) int {
			return cmp.Or(cmp.Compare(g.Nodes[b].Inbound, g.Nodes[a].Inbound), cmp.Compare(g.Nodes[a].Path, g.Nodes[b].Path))
		})
		n := float64(len(ids))
		// The discs' centres: a spiral whose area grows with the pages
		// placed, a gap between discs.
		dist := 1.25 * spacing * math.Sqrt(placed+n/2)
		if k == 0 {
			dist = 0
		}
		cx, cy := dist*math.Cos(float64(k)*golden), dist*math.Sin(float64(k)*golden)
		placed += n * 1.6
		for j, i := range ids {
			rad := spacing * math.Sqrt(float64(j)+0.5) * 0.9
			a := float64(j) * golden
			out.Nodes[i].X, out.Nodes[i].Y = cx+rad*math.Cos(a), cy+rad*math.Sin(a)
		}
	}
	return out
}

// graphActivity streams, as server-sent events "file", the paths agents
// write as they write them (their activity), so that the graph makes
// those pages pulse.
func (u *UI) graphActivity(w http.ResponseWriter, r *http.Request, s *session) error {
	after, err := u.app.LastEvent(r.Context())
	if err != nil {
		return err
	}
	return u.stream(w, r, after, func(w io.Writer, ev *app.Event) {
		if d := ev.Fields(); ev.Kind == "ingest.activity" && d.Activity == "file" && d.Text != "" {
			b, _ := json.Marshal(d.Text)
			fmt.Fprintf(w, "event: file\ndata: %s\n\n", b)
		}
	}, nil)
}
