package activities_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workers"
)

// slowGate answers after the ingestion lag an error tracker needs, like the Sentry gate.
type slowGate struct{ lag time.Duration }

func (g slowGate) Check(ctx context.Context, _ capability.GateRequest) (contracts.GateResult, error) {
	select {
	case <-ctx.Done():
		return contracts.GateResult{}, ctx.Err()
	case <-time.After(g.lag): // the work itself: waiting out the tracker's lag
	}
	return contracts.GateResult{Source: "slow", Errors: []string{}}, nil
}

func gateWorkflow(ctx workflow.Context) (contracts.GateResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		HeartbeatTimeout: 300 * time.Millisecond})
	var out contracts.GateResult
	var v *activities.Verify
	err := workflow.ExecuteActivity(ctx, v.RuntimeGate, capability.GateRequest{ContractID: "c-gate", Attempt: 1}).Get(ctx, &out)
	return out, err
}

// TestRuntimeGateHeartbeatsThroughTheLag: a gate slower than the heartbeat timeout (the
// Sentry gate polls for a minute or more) is not mistaken for a lost worker.
func TestRuntimeGateHeartbeatsThroughTheLag(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	v := &activities.Verify{Gate: slowGate{lag: 1500 * time.Millisecond}}
	workers.RegisterVerify(env, v)
	env.RegisterWorkflow(gateWorkflow)
	env.ExecuteWorkflow(gateWorkflow)
	var out contracts.GateResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatalf("a live gate timed out: %v", err)
	}
	if out.Source != "slow" {
		t.Fatalf("result %+v", out)
	}
}
