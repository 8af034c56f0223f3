package datadir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff/signoff/internal/preview"
)

// Sandboxed work (previews, the coding CLI) happens under the system temp folder, in one
// folder per data dir: every user can traverse the temp folder, while the data dir (keys,
// payment state) must stay closed to the unprivileged user and its parents may be too (a home
// folder). Those folders hold whole installs and builds, gigabytes for a real app, and
// outlive the process that made them on purpose (slots are a build cache). They must not
// outlive their data dir: each records its owner, and making one removes the folders whose
// data dir is gone.

const (
	previewsBase = "signoff-previews"
	executorBase = "signoff-executor"
	// ownerFile, inside a sandbox root, holds the absolute path of the data dir it belongs
	// to; only the worker's user can read it.
	ownerFile = ".owner"
	// orphanGrace is how long a root whose data dir is missing is left alone, for a process
	// that names its root before it makes its data dir.
	orphanGrace = 10 * time.Minute
)

// PreviewJobsRoot is where the execute queue builds and serves previews for dataDir.
func PreviewJobsRoot(dataDir string) (string, error) { return sandboxRoot(dataDir, previewsBase, "") }

// ExecutorJobsRoot is where the coding CLI's job folders go for dataDir.
func ExecutorJobsRoot(dataDir string) (string, error) { return sandboxRoot(dataDir, executorBase, "") }

// AuthoringPreviewJobsRoot is where a base check run in the CLI's own process builds, apart
// from the execute queue's previews of the same data dir so their slots never collide.
func AuthoringPreviewJobsRoot(dataDir string) (string, error) {
	return sandboxRoot(dataDir, previewsBase, "-authoring")
}

// sandboxRoot is the folder of base for dataDir (0711: the unprivileged user can traverse
// it, and nothing of the data dir is inside it). It records dataDir as the owner, and first
// removes the roots of base whose data dir no longer exists.
func sandboxRoot(dataDir, base, suffix string) (string, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(os.TempDir(), base)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return "", err
	}
	root := filepath.Join(dir, hex.EncodeToString(sum[:6])+suffix)
	removeOrphanRoots(dir, time.Now())
	if err := os.MkdirAll(root, 0o711); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, ownerFile), []byte(abs+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("sandbox root %s: record its owner: %w", root, err)
	}
	return root, nil
}

// removeOrphanRoots removes the roots under dir whose owner (the data dir) is gone, that have
// no running process on record (a preview's pids folder is empty) and that nobody has named
// for orphanGrace. A root without an owner record is left alone: it may be another version's.
// Best effort: a root that cannot be removed now is tried again next time.
func removeOrphanRoots(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		root := filepath.Join(dir, e.Name())
		if orphaned(root, now) {
			_ = os.RemoveAll(root)
		}
	}
}

func orphaned(root string, now time.Time) bool {
	owner := filepath.Join(root, ownerFile)
	fi, err := os.Lstat(owner)
	if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < orphanGrace {
		return false
	}
	data, err := os.ReadFile(owner)
	if err != nil {
		return false
	}
	dataDir := strings.TrimSpace(string(data))
	if !filepath.IsAbs(dataDir) {
		return false
	}
	if _, err := os.Lstat(dataDir); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	return !preview.HasProcesses(root)
}
