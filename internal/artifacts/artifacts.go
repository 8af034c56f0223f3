// Package artifacts is the store every artifact goes through once Signoff's control, execute
// and verify workers run on separate hosts: evidence JSON, screenshots, traces, proof bundles,
// settlements, logs and git bundles. No worker can then rely on another's local disk.
//
// Content lives in content-addressed blobs, so a retried activity that puts the same bytes
// again stores nothing new. Names (slash paths such as
// "proofs/<contract>/attempt-1/try-1/evidence.json") point at blobs and never move once set,
// so a proof folder read back from the store is the one that was written.
//
// Open takes a URL: file:///abs/path on one machine, s3://bucket?... for S3 or any
// S3-compatible server.
package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Store keeps artifacts as content-addressed blobs plus immutable names that point at them.
// Every method is safe for concurrent use, also by several processes sharing one store.
type Store interface {
	// Put stores the content of r under its digest and returns the digest. Putting bytes the
	// store already holds writes nothing, so a retried activity never makes a second copy.
	Put(ctx context.Context, r io.Reader) (Digest, error)
	// Get streams the blob with digest d. The digest is checked while reading: the Read that
	// reaches the end returns an error wrapping ErrDigestMismatch if the bytes differ, so a
	// caller must discard what it read when a Read fails.
	Get(ctx context.Context, d Digest) (io.ReadCloser, error)
	// Has reports whether the blob with digest d is in the store.
	Has(ctx context.Context, d Digest) (bool, error)
	// Link makes name point at the blob d, which must already be in the store. Linking a
	// name again to the same digest succeeds; linking it to another digest fails with a
	// *ConflictError and leaves the name as it was.
	Link(ctx context.Context, name string, d Digest) error
	// Resolve returns the digest a name points at.
	Resolve(ctx context.Context, name string) (Digest, error)
	// List returns the names that start with prefix (a plain string prefix, as in S3: end it
	// with "/" to list one folder), sorted by name, with their digests. An empty prefix lists
	// every name.
	List(ctx context.Context, prefix string) ([]Entry, error)
	// Close releases the connection to the backing bucket.
	Close() error
}

// Entry is one name and the digest it points at.
type Entry struct {
	Name   string
	Digest Digest
}

// Errors a caller can test for with errors.Is. Every error a Store returns wraps one of these
// or a backend error, with the operation and the name or digest involved.
var (
	// ErrNotFound: no blob with that digest, or no such name.
	ErrNotFound = errors.New("not found")
	// ErrDigestMismatch: a blob's bytes do not hash to the digest it is stored under.
	ErrDigestMismatch = errors.New("content does not match its digest")
	// ErrTooLarge: the content exceeds the store's maximum object size.
	ErrTooLarge = errors.New("content exceeds the maximum object size")
	// ErrInvalidName: a name or list prefix breaks the naming rules (see ValidateName).
	ErrInvalidName = errors.New("invalid name")
	// ErrInvalidDigest: a digest is not "sha256:" and 64 lowercase hex digits.
	ErrInvalidDigest = errors.New("invalid digest")
)

// ConflictError is returned by Link when the name already points at another blob. Names are
// immutable: a proof that cited one artifact must never be shown a different one later.
type ConflictError struct {
	Name string
	// Have is the digest the name points at and keeps; Want is the one that was refused.
	Have, Want Digest
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("artifacts: name %q already points at %s; refusing to repoint it to %s", e.Name, e.Have, e.Want)
}
