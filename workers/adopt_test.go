package workers

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
	"github.com/signoff/signoff/policy/policytest"
)

// takenStore stands for an artifact store in which this verification's name is already taken:
// Publish conflicts, and Fetch writes what was published first into the folder.
type takenStore struct {
	dir   string
	first []byte
}

func (s takenStore) Publish(context.Context, string, string, string, []string) (artifacts.Digest, error) {
	return "", &artifacts.ConflictError{Name: "proofs/x/attempt-1/try-1/verifier"}
}

func (s takenStore) Fetch(context.Context, string, string, string) (bool, error) {
	return true, os.WriteFile(filepath.Join(s.dir, proofstore.EvidenceFile), s.first, 0o644)
}

// Evidence found under this verification's name is adopted only when this verifier signed
// it for this request: a part planted by anyone else who can write the store (a forged
// verdict, another attempt's evidence) is refused, never adopted.
func TestAdoptsOnlyItsOwnEvidenceForThisRequest(t *testing.T) {
	c := prooftest.W1(t)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	own := policytest.VerifierKey
	_, other, _ := ed25519.GenerateKey(nil)
	hash, err := contracts.Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	req := capability.VerifyRequest{ContractID: c.ContractID, ContractHash: hash, Attempt: 1, Try: 1, ExpectedSHA: sha}
	evidence := func(key ed25519.PrivateKey, attempt int, expected string) []byte {
		t.Helper()
		ev, err := policytest.Evidence(c, expected, policytest.Options{Attempt: attempt, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	cases := []struct {
		name    string
		first   []byte
		refused string
	}{
		{"its own", evidence(own, 1, sha), ""},
		{"signed by another key", evidence(other, 1, sha), "not this verifier's"},
		{"of another attempt", evidence(own, 2, sha), "not this verifier's"},
		{"of another commit", evidence(own, 1, strings.Repeat("f", 40)), "not this verifier's"},
		{"not evidence", []byte(`{"verdict":"satisfied"}`), "is not evidence"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := sharedVerifier{share: takenStore{dir: dir, first: tc.first}, key: own.Public().(ed25519.PublicKey)}
			mine, err := policytest.Evidence(c, sha, policytest.Options{Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.publish(context.Background(), req, dir, mine)
			if tc.refused == "" {
				if err != nil || got == nil || got.digest != contracts.DigestBytes(tc.first) {
					t.Fatalf("own evidence not adopted: %+v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refused) || !errors.Is(err, capability.ErrRefused) {
				t.Fatalf("adopted or wrongly refused: %+v, %v", got, err)
			}
		})
	}
}

// countingVerifier measures by writing the evidence it was given into the request's folder.
type countingVerifier struct {
	proofs proofstore.Store
	ev     *contracts.Evidence
	calls  int
}

func (v *countingVerifier) Verify(_ context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	v.calls++
	dir, err := v.proofs.Dir(req.ContractID, req.Attempt, req.Try)
	if err != nil {
		return capability.VerifyResult{}, err
	}
	digest, err := v.proofs.WriteEvidence(dir, v.ev)
	return capability.VerifyResult{Evidence: v.ev, EvidenceDigest: digest, ProofDir: dir}, err
}

// memoryShare is a store with one name: Publish takes it when free, Fetch copies it back.
type memoryShare struct {
	dir       string // the proof folder's root
	published []byte
	publishes int
}

func (m *memoryShare) Publish(_ context.Context, contractID, rel, _ string, files []string) (artifacts.Digest, error) {
	m.publishes++
	if m.published != nil {
		return "", &artifacts.ConflictError{Name: "taken"}
	}
	data, err := os.ReadFile(filepath.Join(m.root(contractID, rel), proofstore.EvidenceFile))
	m.published = data
	return "", err
}

func (m *memoryShare) Fetch(_ context.Context, contractID, rel, _ string) (bool, error) {
	if m.published == nil {
		return false, nil
	}
	return true, os.WriteFile(filepath.Join(m.root(contractID, rel), proofstore.EvidenceFile), m.published, 0o644)
}

func (m *memoryShare) root(contractID, rel string) string {
	return filepath.Join(m.dir, contractID, rel)
}

// A verification already in the store (its worker was killed after publishing) is adopted
// without measuring again; one that is not is measured once and published.
func TestSharedVerifierAdoptsBeforeMeasuring(t *testing.T) {
	c := prooftest.W1(t)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	hash, err := contracts.Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policytest.Evidence(c, sha, policytest.Options{Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	proofs := proofstore.Store{Root: t.TempDir()}
	inner := &countingVerifier{proofs: proofs, ev: ev}
	share := &memoryShare{dir: proofs.Root}
	s := sharedVerifier{Verifier: inner, proofs: proofs, share: share, key: policytest.VerifierKey.Public().(ed25519.PublicKey)}
	req := capability.VerifyRequest{ContractID: c.ContractID, ContractHash: hash, Attempt: 1, Try: 1, ExpectedSHA: sha}

	first, err := s.Verify(context.Background(), req)
	if err != nil || inner.calls != 1 || share.publishes != 1 || share.published == nil {
		t.Fatalf("first verification: %v, measured %d, published %d", err, inner.calls, share.publishes)
	}
	again, err := s.Verify(context.Background(), req) // the retried activity
	if err != nil || inner.calls != 1 || share.publishes != 1 {
		t.Fatalf("retry: %v, measured %d times, published %d times", err, inner.calls, share.publishes)
	}
	if again.EvidenceDigest != first.EvidenceDigest || again.ProofDir != first.ProofDir {
		t.Fatalf("adopted %s in %s, published %s in %s", again.EvidenceDigest, again.ProofDir, first.EvidenceDigest, first.ProofDir)
	}
}
