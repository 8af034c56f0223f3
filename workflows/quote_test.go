package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/contractapi"
)

// TestQuoteWorkflowSays: a drafted quote's messages are pushed as drafted; a draft that keeps
// failing is pushed as Failed with no text of ours, so the chat words it and no internal
// error reaches the requester.
func TestQuoteWorkflowSays(t *testing.T) {
	for _, tc := range []struct {
		name    string
		draft   error
		outcome string
		failed  bool
		texts   int
	}{
		{"quoted", nil, contractapi.QuoteOffered, false, 2},
		{"draft keeps failing", errors.New("survey: disk on fire"), contractapi.QuoteFailed, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute}) // a busy host, not a deadlock
			env.RegisterWorkflowWithOptions(workflows.QuoteWorkflow, workflow.RegisterOptions{Name: contractapi.QuoteWorkflowName})
			env.RegisterActivityWithOptions(func(context.Context, contractapi.QuoteRequest) (contractapi.QuoteReply, error) {
				if tc.draft != nil {
					return contractapi.QuoteReply{}, tc.draft
				}
				return contractapi.QuoteReply{Outcome: contractapi.QuoteOffered, Messages: []string{"terms", "how to approve"}}, nil
			}, activity.RegisterOptions{Name: contractapi.DraftQuoteActivity})
			var said []contractapi.ChatSay
			env.RegisterActivityWithOptions(func(_ context.Context, s contractapi.ChatSay) error {
				said = append(said, s)
				return nil
			}, activity.RegisterOptions{Name: contractapi.ChatSayActivity})

			env.ExecuteWorkflow(contractapi.QuoteWorkflowName, contractapi.QuoteRequest{Requester: "agent1q", Session: "s", MsgID: "m", Text: "goal"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var out contractapi.QuoteReply
			if err := env.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			if out.Outcome != tc.outcome || !out.Delivered {
				t.Errorf("reply %+v, want outcome %s delivered", out, tc.outcome)
			}
			if len(said) != 1 || said[0].Failed != tc.failed || len(said[0].Texts) != tc.texts || said[0].To != "agent1q" {
				t.Fatalf("said %+v, want one push to agent1q, failed=%v with %d texts", said, tc.failed, tc.texts)
			}
		})
	}
}
