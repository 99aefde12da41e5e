package app

import (
	"encoding/base64"
	"strconv"
	"strings"

	"cairn"
)

// maxCursorOffset bounds the offset a cursor may name.
const maxCursorOffset = 1 << 30

// Cursor encodes the cursor of the page of a list that starts at offset
// n: an opaque string every surface gives its clients ("" for the start).
func Cursor(n int) string {
	if n <= 0 {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte("o" + strconv.Itoa(n)))
}

// CursorOffset decodes a cursor Cursor made: the offset of the page's
// first item; "" is 0. Anything else is EINVALID.
func CursorOffset(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	n, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), "o"))
	if err != nil || err2 != nil || n < 0 || n > maxCursorOffset || !strings.HasPrefix(string(raw), "o") {
		return 0, cairn.Errorf(cairn.EINVALID, "%q is not a cursor of this list", cursor).
			WithHint("Pass the next cursor of the page before, as it came.")
	}
	return n, nil
}
