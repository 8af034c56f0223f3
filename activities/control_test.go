package activities_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

type fakeProofs struct {
	got     contracts.Bundle
	settled contracts.Settlement
}

func (f *fakeProofs) WriteSettlement(_ context.Context, s contracts.Settlement) (string, error) {
	f.settled = s
	return "/p/settlement.json", nil
}

func (f *fakeProofs) WriteBundle(_ context.Context, c contracts.Contract, b contracts.Bundle) (capability.RecordResult, error) {
	f.got = b
	return capability.RecordResult{ProofDir: "/p", BundleDigest: "d"}, nil
}

type fakeDeliverer struct {
	comment string
	final   bool
}

func (f *fakeDeliverer) Publish(context.Context, capability.PublishRequest) (contracts.PRRef, error) {
	return contracts.PRRef{}, nil
}
func (f *fakeDeliverer) Report(_ context.Context, _ contracts.Bundle, final bool, comment string) (contracts.PRRef, error) {
	f.comment, f.final = comment, final
	return contracts.PRRef{}, nil
}
func (f *fakeDeliverer) Head(context.Context, capability.HeadRequest) (string, error) { return "", nil }

// TestRecordAttemptSignsAndReportsTheRenderedComment: the bundle is signed with the control
// key before it is stored, and the deliverer gets the comment the shared template rendered.
func TestRecordAttemptSignsAndReportsTheRenderedComment(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	proofs, deliver := &fakeProofs{}, &fakeDeliverer{}
	c := &activities.Control{Proofs: proofs, Deliverer: deliver, BundleKey: key,
		Comment: func(b contracts.Bundle, ct contracts.Contract) string {
			return "## Signoff: " + b.Verdict + " for " + ct.ContractID
		}}
	_, err := c.RecordAttempt(context.Background(), capability.RecordRequest{Final: true,
		Bundle: contracts.Bundle{ContractID: "c-one", Attempt: 1, Verdict: contracts.Satisfied}, Contract: contracts.Contract{ContractID: "c-one"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := proofs.got.VerifySignature(key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("stored bundle: %v", err)
	}
	if deliver.comment != "## Signoff: satisfied for c-one" || !deliver.final {
		t.Fatalf("deliverer got %q final=%v", deliver.comment, deliver.final)
	}
}

type baseProofs struct {
	fakeProofs
	asked [3]string
}

func (f *baseProofs) BaseRef(_ context.Context, id, hash, base string) (*contracts.BaseRef, error) {
	f.asked = [3]string{id, hash, base}
	return &contracts.BaseRef{EvidenceDigest: "base-digest"}, nil
}

// A proof store that holds the base check makes the bundle bind it under the signature.
func TestRecordAttemptBindsTheBaseCheck(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	proofs := &baseProofs{}
	c := &activities.Control{Proofs: proofs, BundleKey: key}
	b := contracts.Bundle{ContractID: "c-one", ContractHash: "h", BaseSHA: "b", Attempt: 1, Verdict: contracts.NotSatisfied}
	if _, err := c.RecordAttempt(context.Background(), capability.RecordRequest{Bundle: b}); err != nil {
		t.Fatal(err)
	}
	got := proofs.got
	if got.Base == nil || got.Base.EvidenceDigest != "base-digest" || proofs.asked != [3]string{"c-one", "h", "b"} {
		t.Fatalf("bundle base %+v, asked %v", got.Base, proofs.asked)
	}
	if err := got.VerifySignature(key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("the base reference is not under the signature: %v", err)
	}
}
