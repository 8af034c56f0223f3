package artifacts

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// bucketStore is the Store over a gocloud bucket; file:// and s3:// differ only in how a
// name is created exactly once (createOnce).
type bucketStore struct {
	bucket  *blob.Bucket
	where   string // the store's URL without its query, for error messages
	maxSize int64
	// spoolDir holds Put's temporary copy of the content; empty means os.TempDir.
	spoolDir string
	// createOnce writes data under key unless key exists, atomically: it returns errExists,
	// and changes nothing, when another writer got there first.
	createOnce func(ctx context.Context, key string, data []byte) error
}

var errExists = errors.New("key exists")

// Put spools the content to a local temporary file while hashing it, because the key is the
// digest and the digest is known only at the end. Then:
//
//   - content already stored is not written again (one Exists request);
//   - otherwise it is written with IfNotExist. Both backends make the object appear whole or
//     not at all: fileblob writes a temporary file beside the target and renames it (atomic
//     on POSIX), S3 publishes an object only when its PUT or multipart upload completes. Two
//     Puts racing on the same content write the same bytes to the same key, so whichever
//     lands, readers see the right blob. IfNotExist makes the loser's write fail instead of
//     replacing the object (S3 If-None-Match: *, so a versioned bucket gets no second
//     version); that failure means "already stored" and Put reports success. fileblob's
//     IfNotExist is only a check before the rename, which is enough here for the reason above.
func (s *bucketStore) Put(ctx context.Context, r io.Reader) (Digest, error) {
	spool, err := os.CreateTemp(s.spoolDir, "signoff-artifact-*")
	if err != nil {
		return "", fmt.Errorf("artifacts: put: spool file: %w", err)
	}
	defer func() {
		_ = spool.Close()
		_ = os.Remove(spool.Name())
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(spool, h), io.LimitReader(r, s.maxSize+1))
	if err != nil {
		return "", fmt.Errorf("artifacts: put: read content: %w", err)
	}
	if n > s.maxSize {
		return "", fmt.Errorf("artifacts: put: %w: more than %d bytes", ErrTooLarge, s.maxSize)
	}
	d := digestOf(h)
	key, err := blobKey(d)
	if err != nil {
		return "", err
	}
	exists, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return "", fmt.Errorf("artifacts: put %s to %s: check existing: %w", d, s.where, err)
	}
	if exists {
		return d, nil
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("artifacts: put %s: rewind spool file: %w", d, err)
	}
	err = s.bucket.Upload(ctx, key, spool, &blob.WriterOptions{
		ContentType: "application/octet-stream",
		IfNotExist:  true,
	})
	if err != nil && gcerrors.Code(err) != gcerrors.FailedPrecondition {
		return "", fmt.Errorf("artifacts: put %s to %s: %w", d, s.where, err)
	}
	return d, nil
}

func (s *bucketStore) Get(ctx context.Context, d Digest) (io.ReadCloser, error) {
	key, err := blobKey(d)
	if err != nil {
		return nil, fmt.Errorf("artifacts: get: %w", err)
	}
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, s.readErr("get "+string(d), err)
	}
	if r.Size() > s.maxSize {
		_ = r.Close()
		return nil, fmt.Errorf("artifacts: get %s: %w: %d bytes stored, limit %d", d, ErrTooLarge, r.Size(), s.maxSize)
	}
	return &verifyingReader{r: r, h: sha256.New(), want: d, max: s.maxSize}, nil
}

func (s *bucketStore) Has(ctx context.Context, d Digest) (bool, error) {
	key, err := blobKey(d)
	if err != nil {
		return false, fmt.Errorf("artifacts: has: %w", err)
	}
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return false, fmt.Errorf("artifacts: has %s in %s: %w", d, s.where, err)
	}
	return ok, nil
}

// Link reads the name first, so a retry (same digest) or a conflict (another digest) costs no
// write and holds on any S3-compatible server. Only a new name is written, with createOnce,
// so two Links racing on one name cannot both win.
func (s *bucketStore) Link(ctx context.Context, name string, d Digest) error {
	key, err := nameKey(name)
	if err != nil {
		return fmt.Errorf("artifacts: link: %w", err)
	}
	if _, err := d.hex(); err != nil {
		return fmt.Errorf("artifacts: link %q: %w", name, err)
	}
	have, err := s.resolveKey(ctx, name, key)
	if err == nil {
		return sameOrConflict(name, have, d)
	}
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	// A name must lead to content, or a proof folder materialised from it would have holes.
	ok, err := s.Has(ctx, d)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("artifacts: link %q: blob %s: %w", name, d, ErrNotFound)
	}
	err = s.createOnce(ctx, key, []byte(d))
	if errors.Is(err, errExists) {
		have, err := s.resolveKey(ctx, name, key)
		if err != nil {
			return err
		}
		return sameOrConflict(name, have, d)
	}
	if err != nil {
		return fmt.Errorf("artifacts: link %q in %s: %w", name, s.where, err)
	}
	return nil
}

func sameOrConflict(name string, have, want Digest) error {
	if have == want {
		return nil
	}
	return &ConflictError{Name: name, Have: have, Want: want}
}

func (s *bucketStore) Resolve(ctx context.Context, name string) (Digest, error) {
	key, err := nameKey(name)
	if err != nil {
		return "", fmt.Errorf("artifacts: resolve: %w", err)
	}
	return s.resolveKey(ctx, name, key)
}

func (s *bucketStore) resolveKey(ctx context.Context, name, key string) (Digest, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return "", s.readErr(fmt.Sprintf("resolve %q", name), err)
	}
	defer func() { _ = r.Close() }()
	// A name holds one digest; read a little more than that so a damaged entry is reported
	// rather than read whole.
	data, err := io.ReadAll(io.LimitReader(r, int64(len(digestPrefix)+2*sha256.Size+1)))
	if err != nil {
		return "", fmt.Errorf("artifacts: resolve %q in %s: %w", name, s.where, err)
	}
	d, err := ParseDigest(string(data))
	if err != nil {
		return "", fmt.Errorf("artifacts: resolve %q in %s: damaged name entry: %w", name, s.where, err)
	}
	return d, nil
}

func (s *bucketStore) List(ctx context.Context, prefix string) ([]Entry, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("artifacts: list: %w", err)
	}
	it := s.bucket.List(&blob.ListOptions{Prefix: namesPrefix + prefix})
	var entries []Entry
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("artifacts: list %q in %s: %w", prefix, s.where, err)
		}
		name, ok := nameFromKey(obj.Key)
		if !ok {
			continue // a write's temporary file
		}
		d, err := s.resolveKey(ctx, name, obj.Key)
		if err != nil {
			return nil, err
		}
		entries = append(entries, Entry{Name: name, Digest: d})
	}
	// Backends list in key order, which is name order (see nameKeySuffix); sort anyway so
	// the promise does not rest on a backend detail.
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries, nil
}

func (s *bucketStore) Close() error {
	if err := s.bucket.Close(); err != nil {
		return fmt.Errorf("artifacts: close %s: %w", s.where, err)
	}
	return nil
}

// readErr turns a backend's "no such key" into ErrNotFound and adds context to anything else.
func (s *bucketStore) readErr(op string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("artifacts: %s: %w", op, ErrNotFound)
	}
	return fmt.Errorf("artifacts: %s in %s: %w", op, s.where, err)
}

// conditionalCreate is createOnce for S3: a PUT with If-None-Match: *, which the server
// decides atomically. AWS S3 does (conditional writes, 2024), and so does SeaweedFS, under a
// per-object lock (the s3:// tests race it); check any other server before relying on it. On
// a server that ignored the header, Link's read-before-write still refuses a repoint done one
// after another; only two Links racing on a brand-new name could then both succeed.
func (s *bucketStore) conditionalCreate(ctx context.Context, key string, data []byte) error {
	err := s.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{
		ContentType: "text/plain; charset=utf-8",
		IfNotExist:  true,
	})
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return errExists
	}
	return err
}

// hardLinkCreate is createOnce for file://. fileblob's IfNotExist is a stat before a rename,
// and the rename replaces whatever appeared in between, so two processes linking one name
// to different digests could both be told they won. link(2) fails if the target exists, so
// the entry is written to a temporary file beside the target and hard-linked into place: it
// appears whole, exactly once. The key maps to the same path fileblob reads, because names
// hold no character fileblob escapes.
func hardLinkCreate(root string) func(ctx context.Context, key string, data []byte) error {
	return func(ctx context.Context, key string, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(root, filepath.FromSlash(key))
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
		if err != nil {
			return err
		}
		defer func() { _ = os.Remove(tmp.Name()) }()
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Chmod(0o644)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if err := os.Link(tmp.Name(), path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return errExists
			}
			return err
		}
		return nil
	}
}

// verifyingReader hashes a blob as it is read and turns the end of the stream into an error if
// the bytes do not match the digest, so corruption at rest or in transit never passes as
// content.
type verifyingReader struct {
	r    *blob.Reader
	h    hash.Hash
	want Digest
	n    int64
	max  int64
	err  error // sticky: once failed, every later Read fails the same way
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.max {
		v.err = fmt.Errorf("artifacts: get %s: %w: read past %d bytes", v.want, ErrTooLarge, v.max)
		return n, v.err
	}
	if err == io.EOF {
		if got := digestOf(v.h); got != v.want {
			v.err = fmt.Errorf("artifacts: get %s: %w: the %d bytes read hash to %s", v.want, ErrDigestMismatch, v.n, got)
			return n, v.err
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.r.Close() }

var _ Store = (*bucketStore)(nil)
