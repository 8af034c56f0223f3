package proof_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofsync"
)

// publish puts a proof folder into the store part by part, as the verify and control workers
// do, so `proof get` has something to materialise.
func publish(t *testing.T, store artifacts.Store, root, contractID string) {
	t.Helper()
	ctx := context.Background()
	s := proofsync.Sync{Store: store, Root: root}
	tries, err := proofstore.TryDirs(filepath.Join(root, contractID))
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range tries {
		var files []string
		err := filepath.WalkDir(td.Path, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(td.Path, p)
			switch rel {
			case proofstore.BundleFile, proofstore.ContractFile, proofstore.EvidenceFile:
			default:
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Publish(ctx, contractID, td.Rel, proofsync.PartVerifier, append(files, proofstore.EvidenceFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Publish(ctx, contractID, td.Rel, proofsync.PartControl, []string{proofstore.ContractFile, proofstore.BundleFile}); err != nil {
			t.Fatal(err)
		}
	}
}

// `proof get` materialises a contract's proof from the data dir's default store, and the
// folder it writes verifies; bad input changes nothing and exits 2, a missing proof exits 1.
func TestGetCommand(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	store, err := artifacts.Open(ctx, datadir.DefaultArtifactsURL(f.dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	id := f.w2.Contract.ContractID
	publish(t, store, f.root, id)

	out := t.TempDir()
	text, code := run(t, "get", id, "--data-dir", f.dataDir, "--out", out)
	if code != 0 {
		t.Fatalf("get: exit %d\n%s", code, text)
	}
	if !strings.Contains(text, "attempt-3/try-1/verifier") || !strings.Contains(text, "signoff proof verify "+filepath.Join(out, id)) {
		t.Errorf("get output names neither the parts nor the verify command:\n%s", text)
	}
	// Every file the store had is back, byte for byte.
	for _, d := range f.w2.Dirs {
		rel, _ := filepath.Rel(f.root, d)
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want, _ := os.ReadFile(filepath.Join(d, e.Name()))
			got, err := os.ReadFile(filepath.Join(out, rel, e.Name()))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s/%s: got %d bytes (%v), want the %d published", rel, e.Name(), len(got), err, len(want))
			}
		}
	}
	if text, code := run(t, "verify", filepath.Join(out, id), "--keys", f.dataDir); code != 0 {
		t.Fatalf("verify of the folder got from the store: exit %d\n%s", code, text)
	}

	// A second get into the same place is refused, and leaves the first copy as it was.
	before, _ := os.ReadFile(filepath.Join(out, id, "attempt-1", "try-1", proofstore.BundleFile))
	if text, code := run(t, "get", id, "--data-dir", f.dataDir, "--out", out); code != 2 || !strings.Contains(text, "already exists") {
		t.Errorf("get over an existing folder: exit %d\n%s", code, text)
	}
	if after, _ := os.ReadFile(filepath.Join(out, id, "attempt-1", "try-1", proofstore.BundleFile)); !bytes.Equal(before, after) {
		t.Error("a refused get changed the existing folder")
	}
	if text, code := run(t, "get", "../etc", "--data-dir", f.dataDir, "--out", out); code != 2 {
		t.Errorf("get of a bad id: exit %d\n%s", code, text)
	}
	empty := t.TempDir()
	if text, code := run(t, "get", "no-such-contract", "--data-dir", f.dataDir, "--out", empty); code != 1 || !strings.Contains(text, "no proof of no-such-contract") {
		t.Errorf("get of an unknown contract: exit %d\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(empty, "no-such-contract")); err == nil {
		t.Error("a failed get left a folder behind")
	}
	if text, code := run(t, "get", id, "--artifacts", "ftp://x/y", "--out", empty); code != 2 {
		t.Errorf("get with a bad store URL: exit %d\n%s", code, text)
	}
}
