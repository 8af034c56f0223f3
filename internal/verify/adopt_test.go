package verify

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
			a := &Activity{Verifier: &Verifier{Key: own}, Share: takenStore{dir: dir, first: tc.first}}
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
