package activities

import (
	"context"
	"fmt"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

// Verify holds the verify queue's clients: the verifier signing key and read-only browser or
// error-tracker keys; never a write credential. Every exported method is an activity under
// its own name.
type Verify struct {
	Verifier capability.Verifier
	Gate     capability.Gate
}

// Verify runs every criterion against the preview.
func (v *Verify) Verify(ctx context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	if v.Verifier == nil {
		return capability.VerifyResult{}, capability.NotConfigured("verifier")
	}
	ctx, stop := heartbeatEvery(ctx, "verifying")
	defer stop()
	res, err := v.Verifier.Verify(ctx, req)
	if err != nil {
		return capability.VerifyResult{}, fmt.Errorf("verify attempt %d: %w", req.Attempt, err)
	}
	return res, nil
}

// RuntimeGate asks the error tracker; without one, page errors in the evidence are the gate.
// An error tracker is polled through its ingestion lag (a minute or more), so the activity
// heartbeats meanwhile: a live gate is not mistaken for a lost worker.
func (v *Verify) RuntimeGate(ctx context.Context, req capability.GateRequest) (contracts.GateResult, error) {
	if v.Gate == nil {
		return contracts.GateResult{Source: "page-errors", Errors: []string{}}, nil
	}
	ctx, stop := heartbeatEvery(ctx, "runtime gate")
	defer stop()
	return v.Gate.Check(ctx, req)
}
