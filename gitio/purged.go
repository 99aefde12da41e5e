package gitio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cairn"
	"cairn/store"
)

// Placeholder is a file whose content was purged from the store, which an
// export wrote as a placeholder that says so.
type Placeholder struct {
	Commit cairn.Hash `json:"commit"` // the commit that holds the file
	Path   string     `json:"path"`
	Blob   cairn.Hash `json:"blob"` // the purged content's hash
}

// purges makes the placeholders of one export, reading the store's purge
// records once, when the first purged content turns up.
type purges struct {
	s       *store.Store
	records map[cairn.Hash]cairn.Purge // nil until loaded
}

// content reads h, or returns the placeholder for it when its content was
// purged (purged is then true).
func (p *purges) content(ctx context.Context, h cairn.Hash) (data []byte, purged bool, err error) {
	data, err = p.s.ReadBlob(ctx, h)
	if !errors.Is(err, cairn.ErrPurged) {
		return data, false, err
	}
	if p.records == nil {
		recs, err := p.s.Backend().Purges(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("read the purge records: %w", err)
		}
		p.records = make(map[cairn.Hash]cairn.Purge, len(recs))
		for _, r := range recs {
			p.records[r.Hash] = r
		}
	}
	return placeholder(h, p.records[h]), true, nil
}

// placeholder is the one line an export writes in place of purged content:
// when, by whom and why it was purged, and its hash.
func placeholder(h cairn.Hash, r cairn.Purge) []byte {
	if r.Principal == "" {
		return fmt.Appendf(nil, "The content of this file was purged from the cairn vault; cairn export wrote this placeholder in its place (blob %s).\n", h)
	}
	return fmt.Appendf(nil, "The content of this file was purged from the cairn vault on %s by %s: %s. cairn export wrote this placeholder in its place (blob %s).\n",
		r.Time.UTC().Format(time.DateOnly), r.Principal, oneLine(r.Reason), h)
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}
