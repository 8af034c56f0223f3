package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
)

// DiscriminateWorkflowName runs a contract's criteria on its base commit.
const DiscriminateWorkflowName = "DiscriminateWorkflow"

// DiscriminateInput asks for the base commit check of a contract before it is quoted.
type DiscriminateInput struct {
	Contract     contracts.Contract `json:"contract"`
	ContractHash string             `json:"contract_hash"`
}

// DiscriminateResult is the base commit's build and the verifier's signed evidence; the
// caller classifies each criterion as failing (the change must fix it) or a regression guard.
type DiscriminateResult struct {
	Build    contracts.BuildResult   `json:"build"`
	Verify   activities.VerifyResult `json:"verify"`
	Verified bool                    `json:"verified"`
}

// DiscriminateWorkflow builds the base commit on the execute queue and verifies it on the
// verify queue, with the same activities and authority boundaries as an attempt. It is
// attempt 0: its proof goes to the contract's base folder.
func DiscriminateWorkflow(ctx workflow.Context, in DiscriminateInput) (DiscriminateResult, error) {
	t := Timeouts{}.withDefaults()
	c := in.Contract
	var prev activities.PreviewResult
	err := workflow.ExecuteActivity(executeCtx(ctx, t, 20*time.Minute), activities.StartPreviewName, activities.PreviewRequest{
		ContractID: c.ContractID, Attempt: 0, Try: 1, Repo: c.Repo, CommitSHA: c.Repo.BaseCommitSHA, Stack: c.Stack,
	}).Get(ctx, &prev)
	if err != nil {
		return DiscriminateResult{}, err
	}
	defer func() {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		_ = workflow.ExecuteActivity(executeCtx(dctx, t, 2*time.Minute), activities.StopPreviewName, prev.PreviewID).Get(dctx, nil)
	}()
	res := DiscriminateResult{Build: prev.Build}
	if !prev.Build.Passed {
		return res, nil
	}
	err = workflow.ExecuteActivity(verifyCtx(ctx, t), activities.VerifyName, activities.VerifyRequest{
		ContractID: c.ContractID, ContractHash: in.ContractHash, Attempt: 0, Try: 1, Criteria: c.Criteria,
		EvidencePolicy: c.EvidencePolicy.Required, Verifier: c.Verifier, ExpectedSHA: c.Repo.BaseCommitSHA, PreviewURL: prev.URL,
	}).Get(ctx, &res.Verify)
	if err != nil {
		return res, err
	}
	res.Verified = true
	return res, nil
}
