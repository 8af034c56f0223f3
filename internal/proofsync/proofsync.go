// Package proofsync publishes the parts of a proof folder to the artifact store and
// materialises them on another host.
//
// The control, execute and verify workers may run on separate hosts with no shared disk. Each
// keeps a local proof folder (see package proofstore) and publishes what it wrote there as
// one part: the files, then a manifest listing them, then one immutable name pointing at the
// manifest. A reader resolves the name and so sees a part whole or not at all.
//
// Everything read from the store may have been written by a hostile or broken worker:
// manifests are read under size and depth limits and strictly decoded, every path is checked
// before it touches the disk, and files are written only through an *os.Root on the target
// folder, so no path or planted symlink can reach outside it.
package proofsync

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/signoff/signoff/internal/artifacts"
)

// Sync moves proof folder parts between a local proof root and the store.
type Sync struct {
	Store artifacts.Store
	Root  string // the local proof root (<data>/proofs)
}

// Publish puts each file (slash paths relative to Root/<contract>/<rel>, in the order given)
// and a manifest listing them, then links Name(contractID, rel, part) to the manifest.
// Publishing the same bytes again succeeds with the same manifest digest, so a retried
// activity is harmless. If the name already points at another manifest, the error wraps the
// *artifacts.ConflictError and the name keeps its first publication; the caller decides
// what to do (the verify worker adopts the earlier one).
//
// Files are read without following symlinks: a proof folder holds plain files, and a link
// could publish something the worker never meant to write (a key, another contract's file).
func (s Sync) Publish(ctx context.Context, contractID, rel, part string, files []string) (artifacts.Digest, error) {
	name, err := Name(contractID, rel, part)
	if err != nil {
		return "", fmt.Errorf("proofsync: publish: %w", err)
	}
	fail := func(err error) (artifacts.Digest, error) {
		return "", fmt.Errorf("proofsync: publish %s: %w", name, err)
	}
	if err := checkPaths(part, files); err != nil {
		return fail(err)
	}
	dir, err := s.openFolder(contractID, rel, false)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = dir.Close() }()
	m := Manifest{Schema: ManifestSchema, Files: make([]File, 0, len(files))}
	for _, p := range files {
		f, err := s.putFile(ctx, dir, p)
		if err != nil {
			return fail(err)
		}
		m.Files = append(m.Files, f)
	}
	data, err := m.encode(part)
	if err != nil {
		return fail(err)
	}
	d, err := s.Store.Put(ctx, bytes.NewReader(data))
	if err != nil {
		return fail(err)
	}
	if err := s.Store.Link(ctx, name, d); err != nil {
		return fail(err)
	}
	return d, nil
}

// putFile stores one file of the folder dir and returns its manifest entry. The size is what
// Put actually read, so a file that changed while being published is described as stored.
func (s Sync) putFile(ctx context.Context, dir *os.Root, p string) (File, error) {
	// os.Root keeps every lookup inside dir but follows links that stay inside it; checking
	// each folder on the way and the file itself refuses those too.
	for i := range len(p) {
		if p[i] != '/' {
			continue
		}
		st, err := dir.Lstat(filepath.FromSlash(p[:i]))
		if err != nil {
			return File{}, fmt.Errorf("%s: %w", p, err)
		}
		if !st.IsDir() {
			return File{}, fmt.Errorf("%s: %s is a %s, not a folder", p, p[:i], describeMode(st.Mode()))
		}
	}
	before, err := dir.Lstat(filepath.FromSlash(p))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", p, err)
	}
	if !before.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is a %s, not a regular file", p, describeMode(before.Mode()))
	}
	f, err := dir.Open(filepath.FromSlash(p))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	// The name may have been swapped for a link between Lstat and Open.
	if opened, err := f.Stat(); err != nil || !os.SameFile(before, opened) {
		return File{}, fmt.Errorf("%s changed while it was being opened", p)
	}
	cr := &countingReader{r: f}
	d, err := s.Store.Put(ctx, cr)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", p, err)
	}
	return File{Path: p, Digest: d, Size: cr.n}, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "folder"
	case m.IsRegular():
		return "regular file"
	default:
		return "special file (" + m.Type().String() + ")"
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Fetch materialises a published part into Root/<contract>/<rel>, replacing files of the same
// names, in manifest order. It returns false, and no error, when the name is not linked.
func (s Sync) Fetch(ctx context.Context, contractID, rel, part string) (bool, error) {
	_, ok, err := s.fetch(ctx, contractID, rel, part)
	return ok, err
}

// fetch is Fetch that also returns the manifest, so FetchContract knows which files came
// from the store rather than from whatever the local folder held before.
func (s Sync) fetch(ctx context.Context, contractID, rel, part string) (Manifest, bool, error) {
	name, err := Name(contractID, rel, part)
	if err != nil {
		return Manifest{}, false, fmt.Errorf("proofsync: fetch: %w", err)
	}
	fail := func(err error) (Manifest, bool, error) {
		return Manifest{}, false, fmt.Errorf("proofsync: fetch %s: %w", name, err)
	}
	d, err := s.Store.Resolve(ctx, name)
	if errors.Is(err, artifacts.ErrNotFound) {
		return Manifest{}, false, nil
	}
	if err != nil {
		return fail(err)
	}
	m, err := readManifest(ctx, s.Store, d, part)
	if err != nil {
		return fail(err)
	}
	dir, err := s.openFolder(contractID, rel, true)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = dir.Close() }()
	for _, f := range m.Files {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := s.fetchFile(ctx, dir, f); err != nil {
			return fail(err)
		}
	}
	return m, true, nil
}

// fetchFile writes one file under a dot-prefixed temporary name and renames it into place
// only once all its bytes were read and matched the manifest, so a reader of the local
// folder never sees a partial or unverified file. Renaming replaces a symlink planted at
// the name rather than writing through it. A plain file already there with the manifest's
// size and digest is left as it is: on one machine the control worker's folder is the
// verifier's, and every file would otherwise be copied over itself for each bundle.
func (s Sync) fetchFile(ctx context.Context, dir *os.Root, f File) (err error) {
	if present(dir, f) {
		return nil
	}
	parent := path.Dir(f.Path)
	if parent != "." {
		if err := dir.MkdirAll(filepath.FromSlash(parent), 0o755); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	tmp := filepath.FromSlash(path.Join(parent, ".proofsync-"+rand.Text()+".tmp"))
	out, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer func() {
		if out != nil {
			_ = out.Close()
		}
		if err != nil {
			_ = dir.Remove(tmp)
		}
	}()
	r, err := s.Store.Get(ctx, f.Digest)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer func() { _ = r.Close() }()
	// One byte past the size tells a longer blob from an exact one; reading an exact one to
	// its end is what makes the store check the digest.
	n, err := io.Copy(out, io.LimitReader(r, f.Size+1))
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if n != f.Size {
		if n > f.Size {
			return fmt.Errorf("%s: the manifest says %d bytes, the store holds more", f.Path, f.Size)
		}
		return fmt.Errorf("%s: the manifest says %d bytes, the store holds %d", f.Path, f.Size, n)
	}
	// No fsync: the local folder is a copy of the store, and fetching again repairs it.
	err = out.Close()
	out = nil
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if err := dir.Rename(tmp, filepath.FromSlash(f.Path)); err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	return nil
}

// present reports whether the folder already holds f: a regular file, not a link, of its
// size and digest.
func present(dir *os.Root, f File) bool {
	name := filepath.FromSlash(f.Path)
	before, err := dir.Lstat(name)
	if err != nil || !before.Mode().IsRegular() || before.Size() != f.Size {
		return false
	}
	in, err := dir.Open(name)
	if err != nil {
		return false
	}
	defer func() { _ = in.Close() }()
	if opened, err := in.Stat(); err != nil || !os.SameFile(before, opened) {
		return false
	}
	d, n, err := artifacts.Sum(in)
	return err == nil && n == f.Size && d == f.Digest
}

// openFolder opens Root/<contract>/<rel> as an *os.Root, creating it (and the proof root)
// when asked. It is reached through an os.Root on the proof root, so a symlinked contract or
// attempt folder pointing elsewhere is refused rather than followed.
func (s Sync) openFolder(contractID, rel string, create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(s.Root, 0o755); err != nil {
			return nil, fmt.Errorf("proof root: %w", err)
		}
	}
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return nil, fmt.Errorf("proof root: %w", err)
	}
	defer func() { _ = root.Close() }()
	sub := filepath.FromSlash(path.Join(contractID, rel))
	if create {
		if err := root.MkdirAll(sub, 0o755); err != nil {
			return nil, err
		}
	}
	return root.OpenRoot(sub)
}
