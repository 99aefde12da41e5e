package app

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"cairn"
)

// BlobReader reads file content by hash: a store, or a batch that holds
// blobs not yet committed (a working tree's edits).
type BlobReader interface {
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
}

// patches renders each change as a unified diff, reading the files'
// content from r.
func (a *App) patches(ctx context.Context, r BlobReader, changes []cairn.Change) []string {
	out := make([]string, len(changes))
	for i, ch := range changes {
		out[i] = patch(ctx, r, ch)
	}
	return out
}

// patch renders one change as a unified diff, reading the files' content
// from r; a binary file, or one whose content cannot be read (purged),
// gives git's one line saying the files differ.
func patch(ctx context.Context, r BlobReader, ch cairn.Change) string {
	read := func(e cairn.Entry) ([]byte, bool) {
		if e.Blob.IsZero() {
			return nil, true
		}
		data, err := r.ReadBlob(ctx, e.Blob)
		if err != nil {
			return nil, false
		}
		return data, utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
	}
	old, ok1 := read(ch.Old)
	new, ok2 := read(ch.New)
	if !ok1 || !ok2 {
		return fmt.Sprintf("Binary files a/%s and b/%s differ\n", cmp.Or(ch.Old.Path, ch.Path), ch.Path)
	}
	oldName, newName := "a/"+ch.Path, "b/"+ch.Path
	if ch.Old.Path != "" {
		oldName = "a/" + ch.Old.Path
	}
	if ch.Old.Blob.IsZero() {
		oldName = "/dev/null"
	}
	if ch.New.Blob.IsZero() {
		newName = "/dev/null"
	}
	return udiff.Unified(oldName, newName, string(old), string(new))
}
