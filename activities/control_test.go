package activities_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
)

type fakeProofs struct {
	got     contracts.Bundle
	settled contracts.Settlement
}

func (f *fakeProofs) WriteSettlement(s contracts.Settlement) (string, error) {
	f.settled = s
	return "/p/settlement.json", nil
}

func (f *fakeProofs) WriteBundle(c contracts.Contract, b contracts.Bundle) (activities.RecordResult, error) {
	f.got = b
	return activities.RecordResult{ProofDir: "/p", BundleDigest: "d"}, nil
}

type fakeDeliverer struct {
	comment string
	final   bool
}

func (f *fakeDeliverer) Publish(context.Context, activities.PublishRequest) (contracts.PRRef, error) {
	return contracts.PRRef{}, nil
}
func (f *fakeDeliverer) Report(_ context.Context, _ contracts.Bundle, final bool, comment string) (contracts.PRRef, error) {
	f.comment, f.final = comment, final
	return contracts.PRRef{}, nil
}
func (f *fakeDeliverer) Head(context.Context, activities.HeadRequest) (string, error) { return "", nil }

// TestRecordAttemptSignsAndReportsTheRenderedComment: the bundle is signed with the control
// key before it is stored, and the deliverer gets the comment the shared template rendered.
func TestRecordAttemptSignsAndReportsTheRenderedComment(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	proofs, deliver := &fakeProofs{}, &fakeDeliverer{}
	c := &activities.Control{Proofs: proofs, Deliverer: deliver, BundleKey: key,
		Comment: func(b contracts.Bundle, ct contracts.Contract) string {
			return "## Signoff: " + b.Verdict + " for " + ct.ContractID
		}}
	_, err := c.RecordAttempt(context.Background(), activities.RecordRequest{Final: true,
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
