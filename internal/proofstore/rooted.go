package proofstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/signoff/signoff/contracts"
)

// A proof folder is hostile input: whoever wrote it may have placed a symlink to a key or any
// other file beside the documents. Everything that reads one opens files through an os.Root
// on the folder, so no symlink or ".." inside it reaches a file outside, and reads each JSON
// document under its kind's size and depth limits.

// documentLimit is the size limit of each document a proof folder holds.
func documentLimit(name string) int64 {
	switch name {
	case ContractFile:
		return contracts.MaxContractBytes
	case EvidenceFile:
		return contracts.MaxEvidenceBytes
	case SettlementFile:
		return contracts.MaxSettlementBytes
	default:
		return contracts.MaxBundleBytes
	}
}

// ReadDocument reads the JSON document name (bundle.json, evidence.json, contract.json or
// settlement.json) inside dir without following a symlink out of dir, refusing one over its
// size or depth limit with a *contracts.LimitError.
func ReadDocument(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("proof store: %w", err)
	}
	defer root.Close()
	return readDocumentIn(root, name)
}

func readDocumentIn(root *os.Root, name string) ([]byte, error) {
	f, err := openRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return contracts.ReadJSON(f, name, documentLimit(name), contracts.MaxJSONDepth)
}

// openRegular opens a regular file inside root; a directory or device is refused, a symlink
// out of root fails in os.Root with "path escapes from parent".
func openRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenContained opens an artifact (a relative name, as evidence lists it) inside dir as a
// regular file, never through a symlink leading out of dir.
func OpenContained(dir, name string) (*os.File, error) {
	clean, err := cleanName(name)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("proof store: %w", err)
	}
	defer root.Close() // an open file outlives its root
	return openRegular(root, clean)
}

// digestIn is FileDigest for an artifact read through root.
func digestIn(root *os.Root, name string) (string, int64, error) {
	clean, err := cleanName(name)
	if err != nil {
		return "", 0, err
	}
	f, err := openRegular(root, clean)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// symlinksIn lists the symbolic links anywhere in root, slash-separated. The proof store
// writes none, so each one is a finding, wherever it points.
func symlinksIn(root *os.Root) []string {
	var links []string
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			links = append(links, p)
		}
		return nil
	})
	return links
}

// ErrSymlinkedFolder is wrapped by NotSymlink's refusal.
var ErrSymlinkedFolder = errors.New("a proof folder must be a plain directory, not a symbolic link")

// NotSymlink refuses a folder that is a symbolic link, so a proof store entry cannot stand in
// for a folder elsewhere on the machine.
func NotSymlink(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("proof store: %w", err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("proof store: %s: %w", filepath.Base(dir), ErrSymlinkedFolder)
	}
	if !st.IsDir() {
		return fmt.Errorf("proof store: %s is not a directory", dir)
	}
	return nil
}
