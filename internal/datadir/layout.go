// Package datadir is the layout of Signoff's data dir (index, proofs, remotes, keys, the
// local services' state) and of the folders outside it where sandboxed work happens, with
// the readers of what workers publish there (their public keys). Every process that names a
// path under a data dir takes it from here, so the wiring in workers/ and the capabilities
// agree without importing each other.
package datadir

import "path/filepath"

// Layout names the files and folders under the data dir.
type Layout struct {
	Index, Proofs, Remotes, Jobs, PRs, Keys, Temporal string
	// Stripe holds the local Stripe test double's state; GitHubPRs the GitHub deliverer's
	// PR records; ExecutorLogs the command executor's output logs, by digest.
	Stripe, GitHubPRs, ExecutorLogs string
	// Rates is the per-requester rate window of contract authoring, shared by `contract new`
	// and chat.
	Rates string
	// TemporalClient is what the embedded server under Temporal leaves for its clients: the CA,
	// the client certificate and key, and the address they are for. A copy in another host's
	// data dir lets that host's workers in.
	TemporalClient string
}

// Paths returns the data dir layout.
func Paths(dataDir string) Layout {
	j := func(p ...string) string { return filepath.Join(append([]string{dataDir}, p...)...) }
	return Layout{Index: j("index.json"), Proofs: j("proofs"), Remotes: j("remotes"),
		Jobs: j("jobs"), PRs: j("prs"), Keys: j("keys"), Temporal: j("temporal"),
		Stripe: j("stripe"), GitHubPRs: j("prs-github"), ExecutorLogs: j("executor-logs"), Rates: j("authoring", "rates.json"),
		TemporalClient: j("temporal", "client")}
}

// ControlKeyFile and VerifierKeyFile are the signing keys under Layout.Keys. Only the control
// worker reads the first and only the verify worker the second.
const (
	ControlKeyFile  = "control.key"
	VerifierKeyFile = "verifier.key"
)

// DefaultArtifactsURL is the one-machine artifact store: a folder in the data dir.
func DefaultArtifactsURL(dataDir string) string {
	abs, err := filepath.Abs(filepath.Join(dataDir, "artifacts"))
	if err != nil {
		abs = filepath.Join(dataDir, "artifacts")
	}
	return "file://" + filepath.ToSlash(abs)
}
