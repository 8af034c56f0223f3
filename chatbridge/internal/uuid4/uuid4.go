// Package uuid4 parses and makes version-4 UUIDs the way the uAgents reference validates
// them: the envelope session goes through pydantic v2, chat message ids through pydantic v1,
// and both insist on an RFC 4122 variant with version 4.
package uuid4

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// ErrNotV4 is pydantic v1's message for a well-formed UUID of another version.
var ErrNotV4 = errors.New("uuid version 4 expected")

// ErrMalformed reports text that is not a UUID at all.
var ErrMalformed = errors.New("value is not a valid uuid")

// New returns a random version-4 UUID in canonical lower-case form.
func New() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("uuid4: crypto/rand failed: " + err.Error()) // the runtime aborts on this anyway
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return format(b[:])
}

// FromKey derives a version-4-shaped UUID from sha256(key): stable across retries, and
// accepted by peers that insist on version 4.
func FromKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return format(b)
}

// ParseEnvelope accepts what pydantic v2's UUID4 accepts (hyphenated, simple, {braced},
// urn:uuid:, any case) and returns the canonical form that str(UUID) gives in Python.
func ParseEnvelope(s string) (string, error) {
	t := strings.ToLower(s)
	t = strings.TrimPrefix(t, "urn:uuid:")
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		t = t[1 : len(t)-1]
	}
	switch len(t) {
	case 32:
	case 36:
		if t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
			return "", ErrMalformed
		}
		t = strings.ReplaceAll(t, "-", "")
		if len(t) != 32 {
			return "", ErrMalformed
		}
	default:
		return "", ErrMalformed
	}
	return check(t)
}

// ParseModel accepts what Python's uuid.UUID(str) accepts (pydantic v1): "urn:" and "uuid:"
// removed, braces stripped, every hyphen dropped, 32 hex digits left.
func ParseModel(s string) (string, error) {
	t := strings.ReplaceAll(strings.ReplaceAll(s, "urn:", ""), "uuid:", "")
	t = strings.ReplaceAll(strings.Trim(t, "{}"), "-", "")
	if len(t) != 32 {
		return "", ErrMalformed
	}
	return check(strings.ToLower(t))
}

func check(hex32 string) (string, error) {
	b, err := hex.DecodeString(hex32)
	if err != nil || len(b) != 16 {
		return "", ErrMalformed
	}
	// Python's UUID.version is None unless the variant is RFC 4122.
	if b[8]&0xc0 != 0x80 || b[6]>>4 != 4 {
		return "", ErrNotV4
	}
	return format(b), nil
}

func format(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
