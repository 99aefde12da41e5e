package cairn

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Hash names an object: the SHA-256 of a type prefix and the object's
// canonical encoding (see docs/format.md). The zero Hash means "none".
type Hash [32]byte

// HashBytes returns the SHA-256 of the concatenation of parts.
func HashBytes(parts ...[]byte) Hash {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	var out Hash
	h.Sum(out[:0])
	return out
}

// IsZero reports whether h is the zero hash.
func (h Hash) IsZero() bool { return h == Hash{} }

// String returns the 64 lowercase hex digits of h.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first 12 hex digits of h, enough to name a commit to a
// person; [Store.Resolve] accepts any unique prefix of 4 or more digits.
func (h Hash) Short() string { return h.String()[:12] }

// MarshalText encodes h as hex, so hashes read well in JSON.
func (h Hash) MarshalText() ([]byte, error) {
	if h.IsZero() {
		return []byte{}, nil
	}
	return []byte(h.String()), nil
}

// UnmarshalText decodes 64 hex digits, or the empty string as the zero hash.
func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*h = Hash{}
		return nil
	}
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHash parses 64 hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, Errorf(EINVALID, "hash %q: want 64 hex digits, got %d characters", s, len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, Errorf(EINVALID, "hash %q is not hexadecimal", s)
	}
	return h, nil
}

// HashRange returns the range of hashes whose hex form starts with prefix
// (1 to 64 hex digits), as byte strings: every such hash h has lo <= h and,
// unless hi is nil, h < hi. It is how a backend looks objects up by a
// prefix; a prefix that is not 1 to 64 hex digits is EINVALID.
func HashRange(prefix string) (lo, hi []byte, err error) {
	if prefix == "" || len(prefix) > 64 {
		return nil, nil, Errorf(EINVALID, "hash prefix %q must be 1 to 64 hex digits", prefix)
	}
	lo, err = hex.DecodeString(prefix + strings.Repeat("0", len(prefix)%2))
	if err != nil {
		return nil, nil, Errorf(EINVALID, "hash prefix %q is not hexadecimal", prefix)
	}
	return lo, upperBound(lo, len(prefix)%2 == 1), nil
}

// upperBound returns the smallest byte string greater than every string
// that starts with the prefix lo (whose last nibble is free when half is
// set), or nil when there is none.
func upperBound(lo []byte, half bool) []byte {
	hi := append([]byte(nil), lo...)
	if half {
		if hi[len(hi)-1] < 0xf0 {
			hi[len(hi)-1] += 0x10
			return hi
		}
		hi = hi[:len(hi)-1]
	}
	for i := len(hi) - 1; i >= 0; i-- {
		if hi[i] < 0xff {
			hi[i]++
			return hi[:i+1]
		}
	}
	return nil
}
