package artifacts

import (
	"fmt"
	"strings"
)

// Limits on names. A name becomes a file path under file:// and an object key under s3://;
// these keep both well inside what either accepts (255-byte path elements, 1024-byte keys).
const (
	MaxNameLen    = 512
	maxSegmentLen = 200
)

// Key layout inside the bucket.
//
// Blobs sit under blobs/sha256/<first two hex digits>/<hex>, so no directory of a file:// store
// grows past a few thousand entries.
//
// A name's key is names/<name> plus nameKeySuffix. The suffix is a character names may not
// contain, which does three things: the name "a" (key "names/a!") can never collide with the
// folder of the name "a/b" on a file system; a write's temporary file beside the key (which
// fileblob and Link create) never looks like a name to List; and since "!" sorts below every
// character a name may hold, keys sort in the same order as their names.
const (
	blobsPrefix   = "blobs/sha256/"
	namesPrefix   = "names/"
	nameKeySuffix = "!"
)

func blobKey(d Digest) (string, error) {
	h, err := d.hex()
	if err != nil {
		return "", err
	}
	return blobsPrefix + h[:2] + "/" + h, nil
}

func nameKey(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	return namesPrefix + name + nameKeySuffix, nil
}

// nameFromKey is nameKey's inverse; ok is false for keys that are not names (temporary files).
func nameFromKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, namesPrefix)
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, nameKeySuffix)
	if !ok || ValidateName(name) != nil {
		return "", false
	}
	return name, true
}

// ValidateName checks a name against the rules every backend can honour the same way:
// slash-separated segments of ASCII letters, digits, '.', '_' and '-'; no empty segment (so no
// leading, trailing or doubled slash); no "." or ".." segment; at most MaxNameLen bytes in all
// and 200 bytes a segment. The narrow alphabet keeps names free of anything a file system,
// S3 key escaping or a URL would treat specially.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidName, len(name), MaxNameLen)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if err := validateSegment(seg); err != nil {
			return fmt.Errorf("%w: %q: %s", ErrInvalidName, name, err)
		}
	}
	return nil
}

// validatePrefix accepts what List may be given: empty, or a name, or a name followed by "/".
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := ValidateName(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("list prefix: %w", err)
	}
	return nil
}

func validateSegment(seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("empty path segment (leading, trailing or doubled '/')")
	case seg == "." || seg == "..":
		return fmt.Errorf("segment %q", seg)
	case len(seg) > maxSegmentLen:
		return fmt.Errorf("segment of %d bytes, more than %d", len(seg), maxSegmentLen)
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("character %q (only letters, digits, '.', '_' and '-')", c)
		}
	}
	return nil
}
