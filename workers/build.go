package workers

import (
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/executor"
	"github.com/signoff/signoff/activities/index"
	"github.com/signoff/signoff/activities/ledger"
	"github.com/signoff/signoff/activities/localgit"
	"github.com/signoff/signoff/activities/proofstore"
	"github.com/signoff/signoff/activities/signing"
)

// Local is the no-account control plane: the ledger, the bare-remote deliverable, the proof
// store and the index, all under the data dir.
type Local struct {
	Ledger    *ledger.Ledger
	Deliverer *localgit.Deliverer
	Proofs    proofstore.Store
	Index     *index.Index
}

// NewLocal builds the local control capabilities.
func NewLocal(cfg Config) *Local {
	p := cfg.Layout()
	remotes := localgit.Remotes{Root: p.Remotes}
	return &Local{
		Ledger:    ledger.Open(p.Ledger, cfg.LoopbackURL),
		Deliverer: &localgit.Deliverer{Remotes: remotes, Store: p.PRs},
		Proofs:    proofstore.Store{Root: p.Proofs},
		Index:     index.Open(p.Index),
	}
}

// NewControl builds the control queue's activities. Only this queue reads the control key.
func NewControl(cfg Config, c client.Client, l *Local, notifier activities.Notifier) (*activities.Control, error) {
	keyPath := filepath.Join(Paths(cfg.DataDir).Keys, ControlKeyFile)
	key, err := signing.LoadOrCreate(keyPath)
	if err != nil {
		return nil, fmt.Errorf("control key: %w", err)
	}
	if _, err := signing.WritePublic(keyPath, key); err != nil {
		return nil, fmt.Errorf("control public key: %w", err)
	}
	return &activities.Control{Payments: l.Ledger, Deliverer: l.Deliverer, Proofs: l.Proofs, Index: l.Index,
		Notifier: notifier, BundleKey: key, Temporal: c, Hook: cfg.Hooks}, nil
}

// NewPreparedExecutor is the executor of the prepared runs.
func NewPreparedExecutor(cfg Config) *executor.Prepared {
	p := cfg.Layout()
	return &executor.Prepared{RunsDir: cfg.RunsDir, JobsDir: p.Jobs, Remotes: localgit.Remotes{Root: p.Remotes}, Allow: cfg.Allow}
}
