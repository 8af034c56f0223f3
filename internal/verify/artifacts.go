package verify

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/signoff/signoff/contracts"
)

// artifact digests a file the run wrote into OutDir.
func (r *run) artifact(name, kind, criterion string) (contracts.Artifact, error) {
	f, err := os.Open(filepath.Join(r.req.OutDir, name))
	if err != nil {
		return contracts.Artifact{}, fmt.Errorf("artifact %s: %w", name, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return contracts.Artifact{}, fmt.Errorf("artifact %s: %w", name, err)
	}
	return contracts.Artifact{Name: name, Kind: kind, Criterion: criterion, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// tracePart is one browser context's trace: a criterion with several viewports has one
// context, hence one trace, per viewport.
type tracePart struct {
	ordinal string // the viewport, e.g. "390x844"
	path    string
}

// traceEntry matches the per-context files of a Playwright trace. The trace viewer loads every
// "<ordinal>.trace" in a zip with its "<ordinal>.network" and "<ordinal>.stacks" (this is how
// Playwright's own test runner puts several contexts in one trace.zip), so renaming them per
// viewport gives one trace-<criterion>.zip that replays every viewport.
var traceEntry = regexp.MustCompile(`^trace\.(trace|network|stacks)$`)

// mergeTraces writes the parts into one zip at dst. Shared resources (content-addressed
// screenshots and snapshot blobs) are written once.
func mergeTraces(dst string, parts []tracePart) (err error) {
	tmp := dst + ".part"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	zw := zip.NewWriter(f)
	seen := map[string]bool{}
	for _, p := range parts {
		if err := copyTrace(zw, p, seen); err != nil {
			_ = zw.Close()
			_ = f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func copyTrace(zw *zip.Writer, p tracePart, seen map[string]bool) error {
	zr, err := zip.OpenReader(p.path)
	if err != nil {
		return fmt.Errorf("read trace %s: %w", filepath.Base(p.path), err)
	}
	defer zr.Close()
	for _, e := range zr.File {
		name := e.Name
		if m := traceEntry.FindStringSubmatch(name); m != nil {
			name = p.ordinal + "-trace." + m[1]
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		// Copied as compressed: inflating every part and deflating it again for each
		// criterion that shares the page was a fifth of the verifier's own CPU on W1.
		raw, err := e.OpenRaw()
		if err != nil {
			return fmt.Errorf("trace entry %s: %w", e.Name, err)
		}
		h := e.FileHeader
		h.Name = name
		w, err := zw.CreateRaw(&h)
		if err == nil {
			_, err = io.Copy(w, raw)
		}
		if err != nil {
			return fmt.Errorf("trace entry %s: %w", e.Name, err)
		}
	}
	return nil
}
