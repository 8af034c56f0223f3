package verify

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore"
)

// Activity adapts the Verifier to the verify queue: artifacts and evidence.json go to the
// proof store directory of the attempt and try, progress becomes heartbeats, and every
// artifact digest is re-checked against the files before the workflow sees the evidence.
type Activity struct {
	Verifier *Verifier
	Proofs   proofstore.Store
}

// Verify runs the criteria and stores the evidence.
func (a *Activity) Verify(ctx context.Context, req activities.VerifyRequest) (activities.VerifyResult, error) {
	try := req.Try
	if try < 1 {
		try = 1
	}
	dir, err := a.Proofs.Dir(req.ContractID, req.Attempt, try)
	if err != nil {
		return activities.VerifyResult{}, activities.Refused(err)
	}
	progress := func(p Progress) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, fmt.Sprintf("%d/%d %s %s %s", p.Index+1, p.Total, p.Criterion, p.Viewport, p.Phase))
		}
	}
	ev, err := a.Verifier.Verify(ctx, Request{
		ContractID: req.ContractID, ContractHash: req.ContractHash, Attempt: req.Attempt, Criteria: req.Criteria,
		EvidencePolicy: contracts.EvidencePolicy{Required: req.EvidencePolicy}, Verifier: req.Verifier,
		ExpectedSHA: req.ExpectedSHA, PreviewURL: req.PreviewURL, OutDir: dir, Progress: progress,
	})
	if err != nil {
		if IsSetupError(err) {
			return activities.VerifyResult{}, activities.NotConfigured("browser verifier (" + err.Error() + ")")
		}
		return activities.VerifyResult{}, err
	}
	digest, err := a.Proofs.WriteEvidence(dir, ev)
	if err != nil {
		return activities.VerifyResult{}, err
	}
	return activities.VerifyResult{Evidence: ev, EvidenceDigest: digest, ProofDir: dir,
		ArtifactProblems: proofstore.CheckArtifacts(dir, ev.Artifacts)}, nil
}
