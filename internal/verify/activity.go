package verify

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofsync"
)

// Activity adapts the Verifier to the verify queue: artifacts and evidence.json go to the
// proof store directory of the attempt and try, progress goes to capability.Progress (the
// activities adapter's heartbeat), and every
// artifact digest is re-checked against the files before the workflow sees the evidence.
type Activity struct {
	Verifier *Verifier
	Proofs   proofstore.Store
	// Share, when set, publishes each verification's folder to the artifact store, where the
	// control worker (on this host or another) and `signoff proof get` read it.
	Share Publisher
}

// Publisher moves a verification's folder to and from the artifact store
// (proofsync.Sync). Rel and part name the folder and the verifier's part of it.
type Publisher interface {
	Publish(ctx context.Context, contractID, rel, part string, files []string) (artifacts.Digest, error)
	Fetch(ctx context.Context, contractID, rel, part string) (bool, error)
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
	if a.Share != nil && req.Variant == nil {
		adopted, err := a.publish(ctx, req, dir, ev)
		if err != nil {
			return capability.VerifyResult{}, err
		}
		if adopted != nil {
			ev, digest, problems = adopted.ev, adopted.digest, proofstore.CheckArtifacts(dir, adopted.ev.Artifacts)
		}
	}
	return capability.VerifyResult{Evidence: ev, EvidenceDigest: digest, ProofDir: dir, ArtifactProblems: problems}, nil
}

// adoptable checks evidence found in the store under this request's name: signed with this
// verifier's key, for this contract hash, attempt and expected commit.
func (a *Activity) adoptable(req capability.VerifyRequest, ev *contracts.Evidence) error {
	if err := ev.VerifySignature(a.Verifier.Key.Public().(ed25519.PublicKey)); err != nil {
		return err
	}
	if ev.ContractHash != req.ContractHash || ev.Attempt != req.Attempt || ev.ExpectedSHA != req.ExpectedSHA {
		return fmt.Errorf("it is of contract %s attempt %d at %s, not %s attempt %d at %s", ev.ContractHash, ev.Attempt,
			ev.ExpectedSHA, req.ContractHash, req.Attempt, req.ExpectedSHA)
	}
	return nil
}

// published is a verification another verify worker published first.
type published struct {
	ev     *contracts.Evidence
	digest string
}

// publish puts the folder's evidence and the artifacts it lists in the artifact store, as
// one part, evidence last. A verification of this attempt and try that is there already
// was made by a worker that died before the workflow heard of it (or by this activity's
// previous try): it stands, and is adopted, so one verification has one proof whichever
// worker finishes it.
func (a *Activity) publish(ctx context.Context, req capability.VerifyRequest, dir string, ev *contracts.Evidence) (*published, error) {
	rel, part, err := proofsync.VerifierPart(req.ContractHash, req.Attempt, req.Try)
	if err != nil {
		return nil, capability.Refused(err)
	}
	files := make([]string, 0, len(ev.Artifacts)+1)
	seen := map[string]bool{}
	for _, art := range ev.Artifacts {
		// A missing or unsafe artifact is already a problem the policy turns into
		// verification_error; the rest of the folder is still worth keeping.
		name := filepath.ToSlash(filepath.Clean(art.Name))
		if seen[name] {
			continue
		}
		if p, err := proofstore.Contained(dir, art.Name); err == nil {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				files = append(files, name)
				seen[name] = true
			}
		}
	}
	files = append(files, proofstore.EvidenceFile)
	_, err = a.Share.Publish(ctx, req.ContractID, rel, part, files)
	var conflict *artifacts.ConflictError
	switch {
	case err == nil:
		return nil, nil
	case !errors.As(err, &conflict):
		return nil, fmt.Errorf("publish the evidence: %w", err)
	}
	if _, err := a.Share.Fetch(ctx, req.ContractID, rel, part); err != nil {
		return nil, fmt.Errorf("adopt the evidence published first: %w", err)
	}
	data, err := proofstore.ReadDocument(dir, proofstore.EvidenceFile)
	if err != nil {
		return nil, fmt.Errorf("adopt the evidence published first: %w", err)
	}
	adopted, err := contracts.DecodeEvidence(data)
	if err != nil {
		return nil, capability.Refused(fmt.Errorf("the evidence published first for this verification is not evidence: %w", err))
	}
	// Whoever can write the store could have published first. Only a verification this
	// verifier signed, of this very request, stands for it; anything else is refused, never
	// adopted, and its name (which cannot be repointed) makes this a verification error.
	if err := a.adoptable(req, adopted); err != nil {
		return nil, capability.Refused(fmt.Errorf("the evidence published first for this verification is not this verifier's: %w", err))
	}
	if l := a.Verifier.Logger; l != nil {
		l.Info("verification already published; adopting it", "contract", req.ContractID, "attempt", req.Attempt, "try", req.Try)
	}
	return &published{ev: adopted, digest: contracts.DigestBytes(data)}, nil
}
