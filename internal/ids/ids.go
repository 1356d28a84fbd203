package ids

import (
	"crypto/rand"
	"encoding/base64"
)

// New returns a new id: 128 random bits, base64url without padding (22 characters).
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
