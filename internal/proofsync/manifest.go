package proofsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
)

// ManifestSchema versions the manifest, so a reader refuses a layout it does not know
// instead of guessing.
const ManifestSchema = "signoff.proof-part/1"

// Limits on a manifest read from the store, which a hostile or broken worker may have
// written: a manifest is read whole into memory and each file becomes a write on disk.
const (
	MaxManifestBytes = 1 << 20
	MaxFiles         = 4096
	// manifestDepth is the nesting of a well-formed manifest (object, files array, file
	// object); anything deeper is refused before decoding.
	manifestDepth = 3
)

// Manifest lists a part's files in the order they are written on fetch.
type Manifest struct {
	Schema string `json:"schema"`
	Files  []File `json:"files"`
}

// File is one file of a part: its slash path relative to the part's folder, and its content.
type File struct {
	Path   string           `json:"path"`
	Digest artifacts.Digest `json:"digest"`
	Size   int64            `json:"size"`
}

// check validates a manifest for part; it runs on what Publish is about to link as well as
// on what Fetch read, so a publisher never links a manifest a reader would refuse.
func (m Manifest) check(part string) error {
	if m.Schema != ManifestSchema {
		return fmt.Errorf("schema %q, want %q", m.Schema, ManifestSchema)
	}
	paths := make([]string, len(m.Files))
	for i, f := range m.Files {
		if _, err := artifacts.ParseDigest(string(f.Digest)); err != nil {
			return fmt.Errorf("entry %q: %w", f.Path, err)
		}
		if f.Size < 0 {
			return fmt.Errorf("entry %q: negative size %d", f.Path, f.Size)
		}
		paths[i] = f.Path
	}
	return checkPaths(part, paths)
}

// encode gives the manifest's bytes. They depend only on the files and their order, so
// republishing the same files yields the same digest and Link accepts it again.
func (m Manifest) encode(part string) ([]byte, error) {
	if err := m.check(part); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("manifest of %d bytes, more than %d", len(data), MaxManifestBytes)
	}
	return data, nil
}

// readManifest reads and checks the manifest d. ReadJSON reads to the end of the blob when it
// is within the limit, so the store's digest check has run before anything is decoded.
func readManifest(ctx context.Context, store artifacts.Store, d artifacts.Digest, part string) (Manifest, error) {
	r, err := store.Get(ctx, d)
	if err != nil {
		return Manifest{}, fmt.Errorf("manifest: %w", err)
	}
	defer func() { _ = r.Close() }()
	data, err := contracts.ReadJSON(r, "manifest", MaxManifestBytes, manifestDepth)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", d, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("manifest %s: %w", d, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Manifest{}, fmt.Errorf("manifest %s: more than one JSON value", d)
	}
	if err := m.check(part); err != nil {
		return Manifest{}, fmt.Errorf("manifest %s: %w", d, err)
	}
	return m, nil
}
