package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
)

// BaseCheckWorkflow builds the base commit on the execute queue and verifies it on the
// verify queue, with the same activities and authority boundaries as an attempt. It is
// attempt 0: its proof goes to the contract's base folder.
func BaseCheckWorkflow(ctx workflow.Context, in contractapi.BaseCheckInput) (contractapi.BaseCheckResult, error) {
	t := contractapi.Timeouts{}.WithDefaults()
	c := in.Contract
	var prev capability.PreviewResult
	err := workflow.ExecuteActivity(executeCtx(ctx, t, 20*time.Minute), execute.StartPreview, capability.PreviewRequest{
		ContractID: c.ContractID, Attempt: 0, Try: 1, Repo: c.Repo, CommitSHA: c.Repo.BaseCommitSHA, Stack: c.Stack,
	}).Get(ctx, &prev)
	if err != nil {
		return contractapi.BaseCheckResult{}, err
	}
	defer func() {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		_ = workflow.ExecuteActivity(executeCtx(dctx, t, 2*time.Minute), execute.StopPreview, prev.PreviewID).Get(dctx, nil)
	}()
	res := contractapi.BaseCheckResult{Build: prev.Build}
	if !prev.Build.Passed {
		return res, nil
	}
	err = workflow.ExecuteActivity(verifyCtx(ctx, t), verify.Verify, capability.VerifyRequest{
		ContractID: c.ContractID, ContractHash: in.ContractHash, Attempt: 0, Try: 1, Criteria: c.Criteria,
		EvidencePolicy: c.EvidencePolicy.Required, Verifier: c.Verifier, ExpectedSHA: c.Repo.BaseCommitSHA, PreviewURL: prev.URL,
		AllowedOrigins: c.AllowedOrigins,
	}).Get(ctx, &res.Verify)
	if err != nil {
		return res, err
	}
	res.Verified = true
	if len(in.Variants) > 0 && workflow.GetVersion(ctx, versionLazyVariants, workflow.DefaultVersion, 1) >= 1 {
		res.Variants = runVariants(ctx, t, in, prev.URL, res.Verify.Evidence)
	}
	return res, nil
}

// runVariants verifies each lazy variant on the running preview: the criteria the base did
// not pass first (a lazy variant is usually rejected there), the rest only when all of those
// passed. A variant that cannot be verified is reported, never the check's failure.
func runVariants(ctx workflow.Context, t contractapi.Timeouts, in contractapi.BaseCheckInput, url string, base *contracts.Evidence) []contractapi.VariantRun {
	c := in.Contract
	passed := map[string]bool{}
	if base != nil {
		for _, r := range base.Results {
			passed[r.CriterionID] = r.Status == contracts.StatusPass
		}
	}
	var first, rest []contracts.Criterion
	for _, cr := range c.Criteria {
		if passed[cr.ID] {
			rest = append(rest, cr)
		} else {
			first = append(first, cr)
		}
	}
	if len(first) == 0 {
		return nil
	}
	out := make([]contractapi.VariantRun, 0, len(in.Variants))
	for i := range in.Variants {
		v := in.Variants[i]
		run := contractapi.VariantRun{Name: v.Name}
		for part, crs := range [][]contracts.Criterion{first, rest} {
			if len(crs) == 0 {
				continue
			}
			var vr capability.VerifyResult
			err := workflow.ExecuteActivity(verifyCtx(ctx, t), verify.Verify, capability.VerifyRequest{
				ContractID: c.ContractID, ContractHash: in.ContractHash, Attempt: 0, Try: 1, Criteria: crs,
				EvidencePolicy: c.EvidencePolicy.Required, Verifier: c.Verifier, ExpectedSHA: c.Repo.BaseCommitSHA, PreviewURL: url,
				AllowedOrigins: c.AllowedOrigins, Variant: &v, VariantPart: part + 1,
			}).Get(ctx, &vr)
			if err != nil {
				run.Error = err.Error()
				break
			}
			run.Verify = append(run.Verify, vr)
			if vr.Evidence == nil || slices.ContainsFunc(vr.Evidence.Results, func(r contracts.CriterionResult) bool { return r.Status != contracts.StatusPass }) {
				break
			}
		}
		out = append(out, run)
	}
	return out
}
