package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/proofstore"
)

// Activity adapts the Verifier to the verify queue: artifacts and evidence.json go to the
// proof store directory of the attempt and try, progress goes to capability.Progress (the
// activities adapter's heartbeat), and every artifact digest is re-checked against the files
// before the workflow sees the evidence. Publishing the folder to the artifact store is a
// decorator of the composition root's, like the other stores' (workers/share.go).
type Activity struct {
	Verifier *Verifier
	Proofs   proofstore.Store
}

// Verify runs the criteria and stores the evidence.
func (a *Activity) Verify(ctx context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	try := req.Try
	if try < 1 {
		try = 1
	}
	dir, err := a.Proofs.Dir(req.ContractID, req.Attempt, try)
	if err != nil {
		return capability.VerifyResult{}, capability.Refused(err)
	}
	if req.Variant != nil {
		// A base check's lazy variant: measured beside the base's own folder and kept on
		// this host (the base check's result carries its evidence), never published as the
		// verification of this attempt and try.
		if err := contracts.ValidateVariant(*req.Variant); err != nil {
			return capability.VerifyResult{}, capability.Refused(err)
		}
		dir = filepath.Join(dir, "variants", fmt.Sprintf("%s-%d", req.Variant.Name, req.VariantPart))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return capability.VerifyResult{}, fmt.Errorf("variant folder: %w", err)
		}
	}
	progress := func(p Progress) {
		capability.Progress(ctx, fmt.Sprintf("%d/%d %s %s %s", p.Index+1, p.Total, p.Criterion, p.Viewport, p.Phase))
	}
	ev, err := a.Verifier.Verify(ctx, Request{
		ContractID: req.ContractID, ContractHash: req.ContractHash, Attempt: req.Attempt, Criteria: req.Criteria,
		EvidencePolicy: contracts.EvidencePolicy{Required: req.EvidencePolicy}, Verifier: req.Verifier,
		ExpectedSHA: req.ExpectedSHA, PreviewURL: req.PreviewURL, AllowedOrigins: req.AllowedOrigins, Variant: req.Variant, OutDir: dir, Progress: progress,
	})
	if err != nil {
		if IsSetupError(err) {
			return capability.VerifyResult{}, capability.NotConfigured("browser verifier (" + err.Error() + ")")
		}
		return capability.VerifyResult{}, err
	}
	digest, err := a.Proofs.WriteEvidence(dir, ev)
	if err != nil {
		return capability.VerifyResult{}, err
	}
	problems := proofstore.CheckArtifacts(dir, ev.Artifacts)
	return capability.VerifyResult{Evidence: ev, EvidenceDigest: digest, ProofDir: dir, ArtifactProblems: problems}, nil
}
