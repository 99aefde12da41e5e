package admit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"cairn"
	"cairn/internal/vaultgen"
)

// blobs is a tree reader over content in memory: the policies' own work,
// without the store's reads.
type blobs map[cairn.Hash][]byte

func (m blobs) Get(_ context.Context, _ cairn.Hash, path string) (cairn.Entry, error) {
	if strings.HasPrefix(path, "raw/") {
		return cairn.Entry{Path: path}, nil
	}
	return cairn.Entry{}, cairn.Errorf(cairn.ENOTFOUND, "%s: not found", path)
}

func (m blobs) ReadBlob(_ context.Context, h cairn.Hash) ([]byte, error) { return m[h], nil }

// BenchmarkPolicies measures twenty policies (those of
// BenchmarkAdmit_Gates) on an agent's change of ten generated pages: the
// change's description (both versions of each page parsed) and every
// policy evaluated.
func BenchmarkPolicies(b *testing.B) {
	pol, err := ParsePolicy(BenchPolicies())
	if err != nil {
		b.Fatal(err)
	}
	if len(pol.Policies) != 20 {
		b.Fatalf("%d policies", len(pol.Policies))
	}
	v := vaultgen.New(vaultgen.Config{Pages: 10000})
	m := blobs{}
	var changes []cairn.Change
	for i := range 10 {
		pg := v.Page(i * 997)
		before, after := pg.Data, append(append([]byte{}, pg.Data...), "\nAn edit.\n"...)
		hb, ha := cairn.HashBytes(before), cairn.HashBytes(after)
		m[hb], m[ha] = before, after
		changes = append(changes, cairn.Change{Kind: cairn.Modified, Path: pg.Path,
			Old: cairn.Entry{Path: pg.Path, Blob: hb}, New: cairn.Entry{Path: pg.Path, Blob: ha}})
	}
	req := &Request{Principal: cairn.Agent("extractive"), Origin: OriginAgent, Route: "ingest"}
	ctx := context.Background()
	for b.Loop() {
		in, err := changeInput(ctx, m, cairn.Hash{}, changes, req, nil)
		if err != nil {
			b.Fatal(err)
		}
		if fs := pol.gatePolicies(in); len(fs) != 0 {
			b.Fatalf("policies applied: %v", fs)
		}
	}
}

// BenchPolicies is cairn.yaml with twenty policies of the kinds docs/admission.md shows:
// sizes, types before and after, frontmatter, sources, paths, findings.
func BenchPolicies() []byte {
	var b strings.Builder
	b.WriteString("policies:\n")
	exprs := []string{
		"origin == 'agent' && diff.pages > 20",
		"files.exists(f, f.type == 'summary' && f.kind != 'deleted' && size(f.missing_sources) > 0)",
		"origin != 'person' && files.exists(f, f.type == 'decision' || f.type_before == 'decision')",
		"diff.added + diff.removed > 5000",
		"files.exists(f, f.kind == 'deleted' && f.type_before == 'entity')",
		"files.exists(f, f.path.startsWith('private/'))",
		"files.exists(f, has(f.frontmatter.status) && f.frontmatter.status == 'final' && origin == 'agent')",
		"findings.exists(x, x.severity == 'error' && x.gate == 'schema') && origin == 'agent'",
		"files.exists(f, f.type != f.type_before && f.kind == 'modified' && f.type_before != '')",
		"route == 'import' && diff.files > 1000",
		"files.filter(f, f.path.endsWith('.md')).size() > 200",
		"files.exists(f, f.removed > 100 && origin == 'agent')",
		"principal.startsWith('agent:untrusted')",
		"files.exists(f, has(f.frontmatter.tags) && type(f.frontmatter.tags) == list && f.frontmatter.tags.exists(t, t == 'secret'))",
		"files.all(f, f.kind == 'deleted') && diff.files > 10",
		"files.exists(f, f.path.lowerAscii().contains('password'))",
		"files.exists(f, f.type == 'analysis' && !has(f.frontmatter.updated))",
		"size(findings) > 50",
		"files.exists(f, f.kind == 'renamed' && f.old_path.startsWith('entities/'))",
		"origin == 'agent' && files.exists(f, f.path == 'index.md') && diff.pages > 15",
	}
	for i, e := range exprs {
		fmt.Fprintf(&b, "  - name: p%02d\n    expression: %q\n    verdict: hold\n    message: policy %d\n", i, e, i)
	}
	return []byte(b.String())
}
