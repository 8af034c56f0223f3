package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Digest names content by its SHA-256: "sha256:<64 lowercase hex digits>". The algorithm is
// part of the string so a later move to another hash can keep old digests readable.
type Digest string

const digestPrefix = "sha256:"

// ParseDigest checks that s is a well-formed digest.
func ParseDigest(s string) (Digest, error) {
	d := Digest(s)
	if _, err := d.hex(); err != nil {
		return "", err
	}
	return d, nil
}

func (d Digest) String() string { return string(d) }

// hex returns the hex part of d after checking its form, so no malformed digest ever
// becomes part of a key.
func (d Digest) hex() (string, error) {
	h, ok := strings.CutPrefix(string(d), digestPrefix)
	if !ok || len(h) != 2*sha256.Size {
		return "", fmt.Errorf("%w: %q", ErrInvalidDigest, string(d))
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("%w: %q", ErrInvalidDigest, string(d))
		}
	}
	return h, nil
}

// Sum reads r to its end and returns the digest the store would keep its bytes under, and
// how many there were: what a copy already on disk is compared with before fetching again.
func Sum(r io.Reader) (Digest, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, err
	}
	return digestOf(h), n, nil
}

func digestOf(h hash.Hash) Digest {
	return Digest(digestPrefix + hex.EncodeToString(h.Sum(nil)))
}
