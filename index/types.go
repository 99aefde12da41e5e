package index

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"cairn"
	"cairn/lint"
	"cairn/schema"
)

// typeCache keeps the vault's compiled types by tree and by declarations,
// so that a commit that does not touch types/ compiles nothing, and one
// that does compiles each distinct set of declarations once.
type typeCache struct {
	mu     sync.Mutex
	byTree map[cairn.Hash]*schema.Set
	byDecl map[[32]byte]*schema.Set
}

// typeCacheSize bounds each of the cache's maps; past it one is emptied.
const typeCacheSize = 64

// TypeSource reads the declarations of a tree: the store, or a batch
// holding a draft's unwritten tree.
type TypeSource interface {
	Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error]
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
}

// Types returns the types declared in tree (types/), compiled; a tree's
// set is compiled once and kept while it is among the recent ones.
func (ix *Index) Types(ctx context.Context, src TypeSource, tree cairn.Hash) (*schema.Set, error) {
	return ix.typesAt(ctx, src, tree)
}

// typesAt returns the types declared in tree.
func (ix *Index) typesAt(ctx context.Context, t TypeSource, tree cairn.Hash) (*schema.Set, error) {
	c := &ix.types
	c.mu.Lock()
	s, ok := c.byTree[tree]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var decls []cairn.Entry
	for e, err := range t.Files(ctx, tree, lint.TypesFolder) {
		if err != nil {
			return nil, fmt.Errorf("index: read %s: %w", lint.TypesFolder, err)
		}
		if _, ok := lint.TypeDeclaration(e.Path); ok {
			decls = append(decls, e)
		}
	}
	h := sha256.New()
	for _, e := range decls {
		h.Write([]byte(e.Path + "\x00" + e.Blob.String() + "\x00"))
	}
	var key [32]byte
	h.Sum(key[:0])
	c.mu.Lock()
	s, ok = c.byDecl[key]
	c.mu.Unlock()
	if !ok {
		var err error
		if s, err = loadTypes(ctx, t, decls); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.byDecl = put(c.byDecl, key, s)
		c.mu.Unlock()
	}
	return ix.rememberTypes(tree, s), nil
}

// rememberTypes records that tree declares the types s, and returns s.
func (ix *Index) rememberTypes(tree cairn.Hash, s *schema.Set) *schema.Set {
	c := &ix.types
	c.mu.Lock()
	c.byTree = put(c.byTree, tree, s)
	c.mu.Unlock()
	return s
}

func put[K comparable](m map[K]*schema.Set, k K, s *schema.Set) map[K]*schema.Set {
	if m == nil || len(m) >= typeCacheSize {
		m = map[K]*schema.Set{}
	}
	m[k] = s
	return m
}

// loadTypes reads and compiles the declarations; there are few.
func loadTypes(ctx context.Context, t TypeSource, entries []cairn.Entry) (*schema.Set, error) {
	decls := make([]schema.Declaration, 0, len(entries))
	for _, e := range entries {
		data, err := t.ReadBlob(ctx, e.Blob)
		if err != nil && !errors.Is(err, cairn.ErrPurged) { // purged: declares nothing
			return nil, fmt.Errorf("index: read %s: %w", e.Path, err)
		}
		decls = append(decls, schema.Declaration{Path: e.Path, Data: data})
	}
	return schema.Load(decls), nil
}

// touchesTypes reports whether a change writes or deletes a declaration.
func touchesTypes(changes []cairn.Change) bool {
	return slices.ContainsFunc(changes, func(c cairn.Change) bool {
		_, a := lint.TypeDeclaration(c.Path)
		_, b := lint.TypeDeclaration(c.Old.Path)
		return a || b
	})
}

// linkTypes fills the types of the pages a page's link fields lead to
// (lint.Facts.LinkTypes). typeOf returns the type of the page at a path.
func linkTypes(f *lint.Facts, types *schema.Set, typeOf func(path string) (string, error)) error {
	if f.Kind != lint.KindPage || f.Page == nil || f.Page.Type == "" {
		return nil
	}
	fields := types.LinkFields(f.Page.Type)
	if len(fields) == 0 {
		return nil
	}
	for _, l := range f.Links {
		if l.Property == "" || !slices.Contains(fields, l.Property) || l.Res.Path == "" {
			continue
		}
		if _, ok := f.LinkTypes[l.Res.Path]; ok {
			continue
		}
		typ, err := typeOf(l.Res.Path)
		if err != nil {
			return err
		}
		if f.LinkTypes == nil {
			f.LinkTypes = map[string]string{}
		}
		f.LinkTypes[l.Res.Path] = typ
	}
	return nil
}
