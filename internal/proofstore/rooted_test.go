package proofstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

// moveOut moves a proof file to another folder and leaves a symlink to it in its place, so
// following the link would find exactly the signed bytes: only refusing to follow it fails
// the verification.
func moveOut(t *testing.T, dir, name string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "secret-"+filepath.Base(name))
	if err := os.Rename(filepath.Join(dir, name), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return outside
}

func TestVerifyDirRefusesSymlinksPointingOut(t *testing.T) {
	root := t.TempDir()
	p := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	shot := p.Evidence[0].Artifacts[0].Name
	moveOut(t, p.Dirs[0], shot)
	moveOut(t, p.Dirs[0], proofstore.EvidenceFile)

	r := verify(t, p.Dirs[0])
	failed := failedNames(r)
	for _, want := range []string{proofstore.CheckSymlinks, proofstore.CheckEvidenceDigest, proofstore.CheckArtifactPrefix + shot} {
		if !contains(failed, want) {
			t.Errorf("check %s did not fail (failed: %v)", want, failed)
		}
	}
	for _, c := range r.Failed() {
		if c.Name == proofstore.CheckEvidenceDigest && !strings.Contains(c.Message, "escapes") {
			t.Errorf("evidence check %q does not say the link escapes the folder", c.Message)
		}
	}
}

func TestVerifyDirRefusesAnEvidenceBomb(t *testing.T) {
	root := t.TempDir()
	p := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	if err := os.WriteFile(filepath.Join(p.Dirs[0], proofstore.EvidenceFile), contractstest.DepthBomb(600<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	r := verify(t, p.Dirs[0])
	var msg string
	for _, c := range r.Failed() {
		if c.Name == proofstore.CheckEvidenceDocument {
			msg = c.Message
		}
	}
	if !strings.Contains(msg, "nesting deeper than the limit of 128") {
		t.Fatalf("evidence_document check %q does not name the depth limit", msg)
	}
}

func TestVerifyContractRefusesASymlinkedContractFolder(t *testing.T) {
	elsewhere := t.TempDir()
	p := prooftest.Build(t, elsewhere, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	store := t.TempDir()
	if err := os.Symlink(filepath.Join(elsewhere, p.Contract.ContractID), filepath.Join(store, p.Contract.ContractID)); err != nil {
		t.Fatal(err)
	}
	_, err := proofstore.VerifyContract(store, p.Contract.ContractID, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	var ie *proofstore.InputError
	if !errors.As(err, &ie) || !errors.Is(err, proofstore.ErrSymlinkedFolder) {
		t.Fatalf("got %v, want an InputError naming the symbolic link", err)
	}
}

func TestReadDocumentStaysInItsFolder(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "key"), []byte(`{"secret":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "key"), filepath.Join(dir, proofstore.SettlementFile)); err != nil {
		t.Fatal(err)
	}
	if b, err := proofstore.ReadDocument(dir, proofstore.SettlementFile); err == nil {
		t.Fatalf("read %q through a symlink out of the folder", b)
	}
	if f, err := proofstore.OpenContained(dir, proofstore.SettlementFile); err == nil {
		f.Close()
		t.Fatal("opened a symlink out of the folder")
	}
}
