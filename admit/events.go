package admit

import (
	"context"
	"fmt"
)

// LastEvent returns the id of the newest event recorded, 0 when there is
// none: a cursor for Events that skips what happened before.
func LastEvent(ctx context.Context, q dbtx) (int64, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("read the last event: %w", err)
	}
	return id, nil
}
