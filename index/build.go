package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
	"cairn/schema"
	"cairn/store"
)

// Rebuild indexes main's head from scratch in one transaction. It is what
// `cairn reindex` runs; the result equals what the incremental updates
// produce.
func (ix *Index) Rebuild(ctx context.Context) error {
	return ix.s.Update(ctx, func(tx *store.Tx) error {
		head, err := tx.Head(ctx, Branch)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		tree := store.EmptyTree
		if !head.IsZero() {
			c, err := tx.ReadCommit(ctx, head)
			if err != nil {
				return err
			}
			tree = c.Tree
		}
		return ix.inTx(ctx, tx, func(q StorageTx) error {
			if err := ix.build(ctx, q, tx, tree); err != nil {
				return err
			}
			return q.SetState(ctx, State{Commit: head, Tree: tree})
		})
	})
}

// contentSpillMax is the most content a full build keeps on disk for its
// second pass (see build; Index.contentMax).
const contentSpillMax = 1 << 30

// A full build reads the vault a chunk of files at a time, buildChunk
// files or buildChunkBytes of content, whichever comes first: it holds
// parsed pages and prepared rows for one chunk, not for the vault.
const (
	buildChunk      = 512
	buildChunkBytes = 4 << 20
)

// chunks cuts entries into the runs a full build reads at a time.
func chunks(entries []cairn.Entry) [][]cairn.Entry {
	var out [][]cairn.Entry
	for len(entries) > 0 {
		n, size := 0, int64(0)
		for n < len(entries) && n < buildChunk && (n == 0 || size+entries[n].Size <= buildChunkBytes) {
			size += entries[n].Size
			n++
		}
		out, entries = append(out, entries[:n]), entries[n:]
	}
	return out
}

// build replaces the whole index with the index of tree, in two passes
// over the vault, a chunk at a time (chunks), so that what it holds does
// not grow with the pages' content:
//
//  1. pages are read and parsed on every core, and their full text written
//     while the next chunk is parsed; what resolving links needs is kept
//     (the keys each page answers to and its headings, in a
//     markdown.ResolverBuilder; its links' targets);
//  2. once every link is resolved (inbound counts and depths need them
//     all), pages are parsed again from their content, which the first
//     pass left in a temporary file (or read from the store again: see
//     contents), their rows prepared on every core and written, each
//     chunk's in key order.
//
// The storage finishes the build (secondary indexes, the full text's
// merges) last.
func (ix *Index) build(ctx context.Context, q StorageTx, t trees, tree cairn.Hash) error {
	if err := q.Clear(ctx); err != nil {
		return err
	}
	var entries []cairn.Entry
	for e, err := range t.Files(ctx, tree, "") {
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	first, err := q.NextFileID(ctx)
	if err != nil {
		return err
	}
	w := newWriter(q)
	w.bulk = true
	// The files by path, for what resolving links gives (a path) and the
	// link fields ask (a page's type): one int32 each, where a map of
	// paths took some 50 bytes a file.
	byPath := newPathIndex(entries)
	runs := chunks(entries)

	// Pass 1. The writer of the full text takes parsed chunks one at a
	// time while the next is parsed; one page a call and nothing in
	// between, so that a full-text engine that buffers (FTS5) writes large
	// segments.
	// The resolver keeps byPath's list of paths: sorted, and unique as a
	// tree's are, it neither reorders nor compacts it.
	rb := markdown.NewResolverBuilder(byPath.paths)
	// Each file's links' targets (markdown.PackTargets) and headings and
	// block ids (markdown.PackFragments), "" but for a page, wait on disk
	// for the links to be resolved: held in memory they were some 180
	// bytes a page.
	targets, err := newSpill(len(entries))
	if err != nil {
		return err
	}
	defer targets.close()
	frags, err := newSpill(len(entries))
	if err != nil {
		return err
	}
	defer frags.close()
	// Each page's content waits on disk for the second pass too: read
	// again from the store it cost a decompression and, from a database
	// server, its lookups and the transfer, in both processes. Not when
	// the vault's pages are more than contentSpillMax bytes (a $TMPDIR in
	// memory would hold them all), nor once the file cannot be written
	// (a full disk): the second pass then reads the store again.
	var contents *spill
	var size int64
	for _, e := range entries {
		if lint.Classify(e.Path) == lint.KindPage {
			size += e.Size
		}
	}
	// noContents goes on without the file (a close of none does nothing).
	noContents := func() { contents.close(); contents = nil }
	if size <= ix.contentMax {
		if contents, err = newSpill(len(entries)); err != nil {
			return err
		}
		defer func() { noContents() }()
	}
	raw := make([]string, buildChunk)
	// linkAt[n] is where file n's links start in the vault's list of
	// links (linkAt[n+1] where they end).
	linkAt := make([]int32, len(entries)+1)
	words := make([]int32, len(entries))
	var v vault
	// The pages' types, for the link fields of declared types, each
	// distinct type held once; and the declarations of types.
	pageTypes := make([]string, len(entries))
	typeNames := map[string]string{}
	var decls []schema.Declaration
	parsed := make(chan []*file, 1)
	text := make(chan error, 1)
	go func() {
		var failed error
		for files := range parsed {
			for _, f := range files {
				if failed == nil && f.page != nil {
					if err := w.writeText(ctx, f); err != nil {
						failed = fmt.Errorf("index: full text: %w", err)
					}
				}
			}
		}
		// A storage that holds its full-text writes, to make them in an
		// order of its own, makes them now, while links are resolved.
		if f, ok := q.(TextFlusher); ok && failed == nil {
			if err := f.FlushText(ctx); err != nil {
				failed = fmt.Errorf("index: full text: %w", err)
			}
		}
		text <- failed
	}()
	// failed ends the writer of the full text, after an error of the
	// first pass.
	failed := func(err error) error {
		close(parsed)
		<-text
		return err
	}
	at := 0
	for _, run := range runs {
		raw := raw[:len(run)]
		clear(raw)
		files, err := parseAll(ctx, t, run, true, func(i int, f *file, data []byte) {
			if f.page != nil && contents != nil {
				raw[i] = string(data)
			}
		})
		if err != nil {
			return failed(err)
		}
		for i, f := range files {
			n := at + i
			f.id = first + int64(n)
			words[n] = int32(f.words)
			linkAt[n+1] = linkAt[n]
			packed, fragments := "", ""
			if f.page == nil {
				rb.AddAttachment(entries[n].Path)
			} else {
				rb.AddPageKeys(f.page)
				packed, fragments = markdown.PackTargets(f.page.Links), markdown.PackFragments(f.page)
				if int64(linkAt[n+1])+int64(len(f.page.Links)) > math.MaxInt32 {
					return failed(cairn.Errorf(cairn.EINVALID, "index: the vault has more than %d links", math.MaxInt32))
				}
				linkAt[n+1] += int32(len(f.page.Links))
				if typ := f.page.Type; typ != "" {
					if _, ok := typeNames[typ]; !ok {
						typeNames[strings.Clone(typ)] = strings.Clone(typ)
					}
					pageTypes[n] = typeNames[typ]
				}
			}
			if err := errors.Join(targets.add(packed), frags.add(fragments)); err != nil {
				return failed(err)
			}
			if contents != nil && contents.add(raw[i]) != nil {
				noContents()
			}
			if _, ok := lint.TypeDeclaration(f.path); ok {
				data, err := t.ReadBlob(ctx, f.blob)
				if err != nil && !errors.Is(err, cairn.ErrPurged) {
					return failed(fmt.Errorf("index: read %s: %w", f.path, err))
				}
				decls = append(decls, schema.Declaration{Path: f.path, Data: data})
			}
			switch {
			case f.kind == lint.KindPage && equalFold(f.path, "index.md"):
				v.index = f.id
			case equalFold(f.path, "eva.json"):
				v.eva = true
			case f.path == policyFile:
				data, err := t.ReadBlob(ctx, f.blob)
				if err != nil && !errors.Is(err, cairn.ErrPurged) {
					return failed(fmt.Errorf("index: read %s: %w", policyFile, err))
				}
				v.lint = lintSettings(data)
			}
		}
		at += len(run)
		parsed <- files
	}
	close(parsed)
	raw = nil
	if contents != nil && contents.done() != nil {
		noContents()
	}
	if err := errors.Join(targets.done(), frags.done()); err != nil {
		<-text
		return err
	}

	// Links, resolved on every core, a block of files at a time read back
	// from disk: where each leads (dst, the file's place plus one; 0 for
	// none), its inbound counts and the pages' depths, in flat lists
	// rather than per-file slices and maps. The second pass takes each
	// link's file from dst rather than searching the paths again.
	r := rb.Resolver()
	dst := make([]int32, linkAt[len(entries)])
	err = inBlocks(len(entries), resolveBlock, func(lo, hi int) error {
		packed, err := targets.span(lo, hi)
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			if linkAt[i] == linkAt[i+1] { // no links: a page of none, or not a page
				continue
			}
			from := &markdown.Page{Path: entries[i].Path}
			out := dst[linkAt[i]:linkAt[i+1]]
			for j, l := range markdown.UnpackTargets(packed[targets.at[i]-targets.at[lo] : targets.at[i+1]-targets.at[lo]]) {
				if res := r.Resolve(from, l); res.Status == markdown.StatusResolved {
					if k, ok := byPath.find(res.Path); ok {
						out[j] = int32(k) + 1
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		<-text
		return err
	}
	if err := targets.close(); err != nil {
		<-text
		return err
	}
	inbound := make([]int32, len(entries))
	for n := range entries {
		for _, d := range dst[linkAt[n]:linkAt[n+1]] {
			if d != 0 && int(d-1) != n { // a page's links to itself are not inbound
				inbound[d-1]++
			}
		}
	}
	depth := make([]int32, len(entries))
	for i := range depth {
		depth[i] = unreachable
	}
	if v.index != 0 {
		depths(int(v.index-first), depth, linkAt, dst)
	}
	if err := <-text; err != nil {
		return err
	}

	// Pass 2: rows, a chunk at a time, prepared on every core, then
	// written. (Writing a chunk while the next is prepared was measured
	// on SQLite: it held two chunks' rows and their garbage, some 15% more
	// memory at 100k pages, and saved no time. A database server's writes
	// take their own process's time, and are overlapped: prepareAll.)
	v.types = schema.Load(decls)
	cfg := v.config()
	holders := func(_ context.Context, k markdown.Key) ([]string, error) { return r.Holders(k), nil }
	names := newSharedNames()
	typeOf := func(p string) (string, error) {
		if k, ok := byPath.find(p); ok {
			return pageTypes[k], nil
		}
		return "", nil
	}
	read := func(at int, run []cairn.Entry) ([]*file, error) {
		if contents == nil {
			return parseAll(ctx, t, run, false, nil)
		}
		return parseSpilled(contents, at, run)
	}
	err = prepareAll(ctx, runs, read, func(k int, f *file, pw *writer) error {
		f.id, f.words = first+int64(k), int(words[k])
		var res []markdown.Resolution
		var dsts []int64
		if f.page != nil {
			to := dst[linkAt[k]:linkAt[k+1]]
			if len(to) != len(f.page.Links) { // the same content, parsed as the first pass did
				return fmt.Errorf("index: %s: %d links, %d in the first pass", f.path, len(f.page.Links), len(to))
			}
			res = make([]markdown.Resolution, len(f.page.Links))
			dsts = make([]int64, len(f.page.Links))
			for j, l := range f.page.Links {
				res[j] = r.Resolve(f.page, l)
				if res[j].Status != markdown.StatusResolved || to[j] == 0 {
					continue
				}
				i := int(to[j] - 1)
				dsts[j] = first + int64(i)
				if !res[j].SamePage && (l.Heading != "" || l.Block != "") {
					packed, err := frags.get(i)
					if err != nil {
						return err
					}
					markdown.CheckFragments(&res[j], packed, l)
				}
			}
		}
		return prepareRows(ctx, pw, f, res, dsts, int(inbound[k]), int(depth[k]), v, cfg, holders, names, typeOf)
	}, w)
	if err != nil {
		return err
	}
	if err := frags.close(); err != nil {
		return err
	}
	noContents()
	// What resolving held is garbage now, and the storage's finish (its
	// indexes and full-text merges, in a database engine's own memory)
	// takes the most memory of the build outside Go's heap: the heap is
	// given back first, rather than kept beside it.
	r, byPath, inbound, depth, pageTypes, words, linkAt, dst = nil, pathIndex{}, nil, nil, nil, nil, nil, nil
	debug.FreeOSMemory()
	return q.FinishBuild(ctx)
}

// prepareAll reads and parses runs of files one after the other (read;
// at is the run's place in all runs), prepares each run's rows on every
// core with prepare (k is the file's place in all runs) and writes them
// with w, in key order. A storage that is an OverlappingWriter writes each
// run's rows while the next is read and prepared.
func prepareAll(ctx context.Context, runs [][]cairn.Entry, read func(at int, run []cairn.Entry) ([]*file, error),
	prepare func(k int, f *file, pw *writer) error, w *writer) error {
	o, ok := w.q.(OverlappingWriter)
	overlap := ok && o.OverlapWrites()
	var writing chan error // the write of the run before, while it is made
	written := func() error {
		if writing == nil {
			return nil
		}
		err := <-writing
		writing = nil
		return err
	}
	workers := make([]*writer, runtime.GOMAXPROCS(0))
	errs := make([]error, len(workers))
	at := 0
	for _, run := range runs {
		files, err := read(at, run)
		if err != nil {
			return errors.Join(err, written())
		}
		chunk := (len(files) + len(workers) - 1) / len(workers)
		var wg sync.WaitGroup
		for n := range workers {
			pw := &writer{bulk: true}
			workers[n] = pw
			wg.Go(func() {
				for i := n * chunk; i < min((n+1)*chunk, len(files)) && errs[n] == nil; i++ {
					errs[n] = prepare(at+i, files[i], pw)
				}
				pw.sortAll()
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return errors.Join(err, written())
		}
		if err := written(); err != nil {
			return err
		}
		for _, pw := range workers {
			w.take(pw)
		}
		if overlap {
			writing = make(chan error, 1)
			go func() { writing <- w.flush(ctx) }()
		} else if err := w.flush(ctx); err != nil {
			return err
		}
		at += len(run)
	}
	return written()
}

// parseSpilled parses the files of run, which starts at place at of the
// build's files, on every core, from the content the first pass spilled
// (pages' words are not taken: the first pass counted them).
func parseSpilled(contents *spill, at int, run []cairn.Entry) ([]*file, error) {
	data, err := contents.read(at, at+len(run))
	if err != nil {
		return nil, err
	}
	out := make([]*file, len(run))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(run); i = int(next.Add(1)) - 1 {
				lo, hi := contents.at[at+i]-contents.at[at], contents.at[at+i+1]-contents.at[at]
				out[i] = parse(run[i], data[lo:hi:hi], false)
			}
		})
	}
	wg.Wait()
	return out, nil
}

// prepareRows collects one file's rows in a bulk writer: the file, its
// keys, citations and links, and its findings.
func prepareRows(ctx context.Context, w *writer, f *file, res []markdown.Resolution, dsts []int64,
	inbound, depth int, v vault, cfg *lint.Config, holders holdersFunc, names *sharedNames, typeOf func(string) (string, error)) error {
	reachable := depth != unreachable
	if err := w.insertFile(ctx, f, inbound, depth); err != nil {
		return err
	}
	facts := &lint.Facts{Path: f.path, Kind: f.kind, Page: f.page, HasIndex: v.index != 0}
	if f.page != nil {
		if err := w.writeLinks(ctx, f, res, dsts); err != nil {
			return err
		}
		facts.Inbound, facts.Reachable = inbound, reachable
		for i, l := range f.page.Links {
			l.Raw = rawLink(l) // as the index stores it
			facts.Links = append(facts.Links, lint.Link{Link: l, Res: res[i]})
		}
		if err := pageFacts(ctx, facts, holders, names); err != nil {
			return err
		}
		if err := linkTypes(facts, v.types, typeOf); err != nil {
			return err
		}
	}
	if fs := lint.Check(facts, cfg); len(fs) > 0 {
		return w.writeFindings(ctx, f.id, fs)
	}
	return nil
}

// pathIndex finds files by path in a list of entries that is in the
// store's order (case-folded paths), not in byte order: it holds the
// entries' paths in byte order (the list the resolver keeps too) and their
// places. (A search of the entries through their places, where the list
// of paths was the resolver's alone, took some 6% of a PostgreSQL
// import's time in this process.)
type pathIndex struct {
	paths []string
	order []int32
}

func newPathIndex(entries []cairn.Entry) pathIndex {
	order := make([]int32, len(entries))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(entries[a].Path, entries[b].Path) })
	paths := make([]string, len(order))
	for k, i := range order {
		paths[k] = entries[i].Path
	}
	return pathIndex{paths, order}
}

// find returns the place in entries of the file at path.
func (x pathIndex) find(path string) (int, bool) {
	k, ok := slices.BinarySearch(x.paths, path)
	if !ok {
		return 0, false
	}
	return int(x.order[k]), true
}

// depths sets depth[n] for every file n reachable from root by links,
// where file n's links lead to dst[linkAt[n]:linkAt[n+1]] (places plus
// one; 0 for none): a breadth-first walk, as bfs over the stored edges.
func depths(root int, depth, linkAt, dst []int32) {
	depth[root] = 0
	queue := []int32{int32(root)}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, d := range dst[linkAt[n]:linkAt[n+1]] {
			if d != 0 && depth[d-1] == unreachable {
				depth[d-1] = depth[n] + 1
				queue = append(queue, d-1)
			}
		}
	}
}

// resolveBlock is how many files' links a full build resolves at a time,
// read back from disk in one read.
const resolveBlock = 4096

// inBlocks calls fn(lo, hi) for each block of size of [0, n) on every
// core, and returns the first error.
func inBlocks(n, size int, fn func(lo, hi int) error) error {
	var next atomic.Int64
	errs := make([]error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for errs[w] == nil {
				lo := int(next.Add(int64(size))) - size
				if lo >= n {
					return
				}
				errs[w] = fn(lo, min(lo+size, n))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
