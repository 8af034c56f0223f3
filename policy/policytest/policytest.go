// Package policytest builds signed verifier evidence for tests of the policy and of the code
// around it (the workflow, the CLI). Observed values are derived from the contract's own
// checks, so tests do not restate the assertion semantics they exercise.
package policytest

import (
	"crypto/ed25519"
	"fmt"

	"github.com/signoff/signoff/contracts"
)

// VerifierKey is a fixed test key; the seed is not a secret.
var VerifierKey = ed25519.NewKeyFromSeed([]byte("signoff-policy-test-verifier-key"))

// VerifierPublicKey is VerifierKey's public half.
func VerifierPublicKey() ed25519.PublicKey { return VerifierKey.Public().(ed25519.PublicKey) }

// Options shape the evidence.
type Options struct {
	Attempt    int
	RuntimeSHA string // default: the expected SHA
	// Override sets observed values per criterion after the passing ones are filled in; the
	// reported status is then recomputed honestly unless KeepStatus is set.
	Override   map[string]map[string]any
	KeepStatus bool
	Key        ed25519.PrivateKey // default VerifierKey
}

// passingValues returns observed values that satisfy a check.
func passingValues(ch contracts.Check) map[string]any {
	if ch.ExpectedKey != "" {
		return map[string]any{ch.Key: 390.0, ch.ExpectedKey: 390.0}
	}
	v := ch.Expected
	if f, ok := v.(float64); ok && ch.Op == contracts.OpLT {
		v = f - 200
	}
	return map[string]any{ch.Key: v}
}

// Evidence returns signed evidence for the contract as the verifier would produce it for a
// preview running expectedSHA.
func Evidence(c contracts.Contract, expectedSHA string, o Options) (*contracts.Evidence, error) {
	hash, err := contracts.Hash(c)
	if err != nil {
		return nil, err
	}
	runtime := o.RuntimeSHA
	if runtime == "" {
		runtime = expectedSHA
	}
	ev := &contracts.Evidence{
		SchemaVersion: contracts.EvidenceSchemaVersion, ContractID: c.ContractID, ContractHash: hash, Attempt: o.Attempt,
		Verifier: c.Verifier, ExpectedSHA: expectedSHA, RuntimeSHA: runtime, PreviewURL: "http://127.0.0.1:4000",
		Browser:   contracts.Browser{Name: "chromium", Version: "test", Mode: "local"},
		StartedAt: "2026-11-29T10:00:00Z", FinishedAt: "2026-11-29T10:00:09Z",
		Artifacts: []contracts.Artifact{},
	}
	for _, cr := range c.Criteria {
		checks, err := contracts.ChecksFor(cr)
		if err != nil {
			return nil, err
		}
		obs := map[string]any{}
		for _, ch := range checks {
			for k, v := range passingValues(ch) {
				obs[k] = v
			}
		}
		for k, v := range o.Override[cr.ID] {
			obs[k] = v
		}
		status := contracts.StatusPass
		if !o.KeepStatus {
			for _, ch := range checks {
				want := ch.Expected
				if ch.ExpectedKey != "" {
					want = obs[ch.ExpectedKey]
				}
				if ok, err := contracts.Compare(ch.Op, obs[ch.Key], want); err != nil || !ok {
					status = contracts.StatusFail
				}
			}
		}
		var names []string
		for _, kind := range contracts.RequiredArtifacts(c, cr) {
			if kind == contracts.ArtifactObserved {
				continue
			}
			name := fmt.Sprintf("%s-%s", kind, cr.ID)
			names = append(names, name)
			ev.Artifacts = append(ev.Artifacts, contracts.Artifact{Name: name, Kind: kind, Criterion: cr.ID,
				SHA256: contracts.DigestBytes([]byte(name)), Size: int64(len(name))})
		}
		ev.Results = append(ev.Results, contracts.CriterionResult{CriterionID: cr.ID, Status: status, Observed: obs,
			DurationMS: 900, Artifacts: names, PageErrors: []string{}, ConsoleErrors: []string{}})
	}
	key := o.Key
	if key == nil {
		key = VerifierKey
	}
	if err := ev.Sign(key); err != nil {
		return nil, err
	}
	return ev, nil
}
