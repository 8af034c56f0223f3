package workers

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/web/proofpage"
)

// ControlPlane is what the control queue keeps under the data dir: the bare-remote
// deliverable, the proof store and the index, plus the services chosen for this process
// (Services.Apply).
type ControlPlane struct {
	Deliverer *localgit.Deliverer
	Proofs    proofstore.Store
	Index     *index.Index
	// Payments is the payment provider (Stripe, or the local Stripe test double), set by
	// Services.Apply; nil fails the payment activities as not configured.
	Payments capability.Payments
	// Publisher, when set, replaces the bare remote as the deliverable (GitHub). The bare
	// remote stays where the execute queue pushes and control reads commits from.
	Publisher capability.Deliverer
}

// NewControlPlane opens the control plane of the data dir.
func NewControlPlane(cfg Config) *ControlPlane {
	p := cfg.Layout()
	remotes := localgit.Remotes{Root: p.Remotes}
	return &ControlPlane{
		Deliverer: &localgit.Deliverer{Remotes: remotes, Store: p.PRs},
		Proofs:    proofstore.Store{Root: p.Proofs},
		Index:     index.Open(p.Index),
	}
}

// NewControl builds the control queue's activities. Only this queue reads the control key.
func NewControl(cfg Config, c client.Client, l *ControlPlane, notifier capability.Notifier) (*activities.Control, error) {
	keyPath := filepath.Join(datadir.Paths(cfg.DataDir).Keys, datadir.ControlKeyFile)
	key, err := signing.LoadOrCreate(keyPath)
	if err != nil {
		return nil, fmt.Errorf("control key: %w", err)
	}
	if _, err := signing.WritePublic(keyPath, key); err != nil {
		return nil, fmt.Errorf("control public key: %w", err)
	}
	ctl := &activities.Control{Payments: l.Payments, Deliverer: l.Deliverer,
		Proofs: ControlProofs{Local: l.Proofs, Share: cfg.proofShare()}, Index: l.Index,
		Notifier: notifier, BundleKey: key, Temporal: c}
	if l.Publisher != nil {
		ctl.Deliverer = l.Publisher
	}
	if cfg.Artifacts != nil {
		ctl.Deliverer = sharedDeliverer{Deliverer: ctl.Deliverer, git: cfg.gitShare()}
	}
	ctl.Comment = prComment(cfg, key.Public().(ed25519.PublicKey))
	return ctl, nil
}

// prComment renders the PR comment with the proof page's template set, reading the
// attempt's evidence from the proof store when it is there. It names the keys by fingerprint:
// the control key this worker signs with, and the verifier key the verify worker published
// in the data dir (read per comment, as the verify worker may start later).
func prComment(cfg Config, controlPub ed25519.PublicKey) func(contracts.Bundle, contracts.Contract) string {
	store := proofstore.Store{Root: cfg.Layout().Proofs}
	return func(b contracts.Bundle, c contracts.Contract) string {
		signers := proofpage.Signers{ControlFingerprint: contracts.KeyFingerprint(controlPub)}
		if k, err := datadir.ReadPublishedKeys(cfg.DataDir); err == nil {
			signers.VerifierFingerprint = k.VerifierFingerprint
		}
		url := ""
		if cfg.LoopbackURL != "" {
			url = cfg.LoopbackURL + "/proofs/" + b.ContractID + "/"
		}
		var ev *contracts.Evidence
		dir, err := store.Dir(b.ContractID, b.Attempt, max(b.Try, 1))
		if err == nil {
			// The bundle is on disk by now: render from the folder, so the comment shows the
			// page's first screen (its base check and the attempts before this one).
			if a := proofpage.LoadAttempt(dir); a.Bundle != nil && a.Bundle.Signature == b.Signature {
				if text, err := proofpage.PRComment(a, url, signers); err == nil {
					return text
				}
			}
			if data, err := os.ReadFile(filepath.Join(dir, proofstore.EvidenceFile)); err == nil {
				ev, _ = contracts.DecodeEvidence(data)
			}
		}
		text, err := proofpage.PRCommentOf(b, &c, ev, url, signers)
		if err != nil {
			return "" // the deliverer falls back to its plain summary
		}
		return text
	}
}

// NewPreparedExecutor is the executor of the prepared runs.
func NewPreparedExecutor(cfg Config) *executor.Prepared {
	p := cfg.Layout()
	return &executor.Prepared{RunsDir: cfg.RunsDir, JobsDir: p.Jobs, Remotes: localgit.Remotes{Root: p.Remotes}, Allow: cfg.Allow}
}
