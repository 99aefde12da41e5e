package cairn

import (
	"crypto/sha256"
	"encoding/hex"
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
