package activities_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workers"
)

// slowGate answers once the activity has heartbeated beats times (each beat is counted by
// the test environment's heartbeat listener), like the Sentry gate waiting out an error
// tracker's ingestion lag: it outlives the heartbeat timeout by events, not by a clock.
type slowGate struct{ beats <-chan struct{} }

// gateBeats: the SDK sends a heartbeat at most every 80% of the timeout, so three span more
// than one timeout.
const gateBeats = 3

func (g slowGate) Check(ctx context.Context, _ capability.GateRequest) (contracts.GateResult, error) {
	for i := 0; i < gateBeats; i++ {
		select {
		case <-ctx.Done():
			return contracts.GateResult{}, ctx.Err()
		case <-g.beats:
		}
	}
	return contracts.GateResult{Source: "slow", Errors: []string{}}, nil
}

// gateHeartbeatTimeout is long against a busy machine's scheduling delays: the heartbeats
// come every third of it.
const gateHeartbeatTimeout = 2 * time.Second

func gateWorkflow(ctx workflow.Context) (contracts.GateResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		HeartbeatTimeout: gateHeartbeatTimeout})
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
	// The SDK fails a workflow task that runs past 1 s of wall time as a deadlock; on a busy
	// host (CI at a load of 12 on two CPUs) this one did. A minute still catches a hang.
	opts := workers.WorkerOptions()
	opts.DeadlockDetectionTimeout = time.Minute
	env.SetWorkerOptions(opts)
	beats := make(chan struct{}, 64)
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) {
		select {
		case beats <- struct{}{}:
		default:
		}
	})
	v := &activities.Verify{Gate: slowGate{beats: beats}}
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
