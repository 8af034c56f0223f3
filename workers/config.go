// Package workers wires activities to their task queues: it builds each queue's activity
// struct from local defaults or configured services (control.go, execute.go, verify.go,
// executor.go, sentry.go, services.go) and registers it, with the workflows, on a Temporal
// worker (workers.go). Beside the wiring it holds what joins the queues when they run apart:
// the store decorators that move proofs, commits and logs through the artifact store
// (share.go), the classification of activity errors (classify.go), the PR head watcher
// (headwatch.go) and the test barrier (barrier.go).
package workers

import (
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/proofsync"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
)

// Config is what the workers need to know about this machine.
type Config struct {
	// DataDir holds everything Signoff keeps: the index, proofs, remotes, jobs, keys, the
	// local Stripe test double's state (see Layout).
	DataDir string
	// ProofDir, when set, holds the proofs instead of <DataDir>/proofs.
	ProofDir string
	// RunsDir holds the prepared runs (fixtures/runs) for the prepared executor.
	RunsDir string
	// Allow lists owner/name patterns contracts may touch.
	Allow []string
	// LoopbackURL is the loopback listener's base URL (where the payer returns after the
	// checkout, proof pages).
	LoopbackURL string
	// Sandbox is the process's one sandbox for repository code and coding CLIs, made when
	// first needed; nil makes a default, sandboxed one for each caller.
	Sandbox *sandbox.Lazy
	// Artifacts is the store the queues share (see share.go): a file:// folder in the data
	// dir on one machine, an S3-compatible bucket across hosts. Nil shares nothing: every
	// queue must then run on this data dir.
	Artifacts artifacts.Store
	// Settings is the process's configuration (internal/settings): the services, browser,
	// executor and tool paths. The zero value is every local default.
	Settings settings.Settings
}

// DefaultAllow is the owner/name patterns contracts may touch when nothing is configured
// (no --allow, no SIGNOFF_REPO_ALLOWLIST): the prepared fixtures and local repositories
// without a recognisable remote. It is the settings' default, which every command and the
// chat use; a replay, which reproduces the prepared runs, always uses it.
var DefaultAllow = settings.Defaults().Authoring.RepoAllowlist

// DefaultRateLimit is the per-requester hourly quote limit when SIGNOFF_RATE_LIMIT is unset,
// for `contract new` and chat alike: the settings' default.
var DefaultRateLimit = settings.Defaults().Authoring.RateLimit

// proofShare is the proof folder's link to the artifact store, nil without one.
func (c Config) proofShare() *proofsync.Sync {
	if c.Artifacts == nil {
		return nil
	}
	return &proofsync.Sync{Store: c.Artifacts, Root: c.Layout().Proofs}
}

// gitShare moves commits between this host's remotes and the artifact store.
func (c Config) gitShare() localgit.Shared {
	return localgit.Shared{Remotes: localgit.Remotes{Root: c.Layout().Remotes}, Store: c.Artifacts}
}

// Layout returns the data dir layout with the proof dir override applied.
func (c Config) Layout() datadir.Layout {
	l := datadir.Paths(c.DataDir)
	if c.ProofDir != "" {
		l.Proofs = c.ProofDir
	}
	return l
}
