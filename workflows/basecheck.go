package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
)

// BaseCheckWorkflow builds the base commit on the execute queue and verifies it on the
// verify queue, with the same activities and authority boundaries as an attempt. It is
// attempt 0: its proof goes to the contract's base folder.
func BaseCheckWorkflow(ctx workflow.Context, in BaseCheckInput) (BaseCheckResult, error) {
	t := Timeouts{}.withDefaults()
	c := in.Contract
	var prev activities.PreviewResult
	err := workflow.ExecuteActivity(executeCtx(ctx, t, 20*time.Minute), execute.StartPreview, activities.PreviewRequest{
		ContractID: c.ContractID, Attempt: 0, Try: 1, Repo: c.Repo, CommitSHA: c.Repo.BaseCommitSHA, Stack: c.Stack,
	}).Get(ctx, &prev)
	if err != nil {
		return BaseCheckResult{}, err
	}
	defer func() {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		_ = workflow.ExecuteActivity(executeCtx(dctx, t, 2*time.Minute), execute.StopPreview, prev.PreviewID).Get(dctx, nil)
	}()
	res := BaseCheckResult{Build: prev.Build}
	if !prev.Build.Passed {
		return res, nil
	}
	err = workflow.ExecuteActivity(verifyCtx(ctx, t), verify.Verify, activities.VerifyRequest{
		ContractID: c.ContractID, ContractHash: in.ContractHash, Attempt: 0, Try: 1, Criteria: c.Criteria,
		EvidencePolicy: c.EvidencePolicy.Required, Verifier: c.Verifier, ExpectedSHA: c.Repo.BaseCommitSHA, PreviewURL: prev.URL,
		AllowedOrigins: c.AllowedOrigins,
	}).Get(ctx, &res.Verify)
	if err != nil {
		return res, err
	}
	res.Verified = true
	return res, nil
}
