package postgres

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A lost connection's error names the database once, however many
// layers translate it (a read's rows, then its caller).
func TestTranslate_LostConnectionNamedOnce(t *testing.T) {
	db := &DB{where: "db.example:5432/vault"}
	err := db.translate(db.translate(db.translate(io.ErrUnexpectedEOF)))
	if n := strings.Count(err.Error(), db.where); n != 1 || !strings.HasPrefix(err.Error(), lostMessage+" "+db.where) {
		t.Errorf("translated three times: %q names %s %d times, want once, after %q", err, db.where, n, lostMessage)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("translated: %v, want it to wrap the driver's error", err)
	}
}
