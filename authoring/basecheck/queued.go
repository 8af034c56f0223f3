package basecheck

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// Queued implements authoring.BaseChecker with BaseCheckWorkflow.
type Queued struct {
	Client client.Client
	// Register, when set, makes the contract's base commit available to the execute queue
	// before the check starts (a local repository pushed to its bare remote).
	Register func(ctx context.Context, c contracts.Contract) error
	// Started, when set, is told the workflow id once the check is running (progress output).
	Started func(workflowID string)
	// Key, when set, names the check after its caller (see WithKey) instead of at random.
	Key string
}

// WithKey returns a copy of the checker whose check of a contract is named after key: a
// caller that retries (a quote drafted again after a restart) joins the check it started,
// running or finished, instead of starting another build and browser run.
func (q *Queued) WithKey(key string) authoring.BaseChecker {
	cp := *q
	cp.Key = key
	return &cp
}

// ForRetry is the checker for the n-th new run of a check that only timed out: a keyed
// check gets a key of its own (the same key would join the finished run); an unkeyed one is
// named at random anyway.
func (q *Queued) ForRetry(n int) authoring.BaseChecker {
	if q.Key == "" {
		return q
	}
	return q.WithKey(retryKey(q.Key, n))
}

// retryKey is key's name for the n-th new run of its check.
func retryKey(key string, n int) string { return fmt.Sprintf("%s/busy-retry-%d", key, n) }

var _ authoring.RetryingChecker = (*Queued)(nil)

// RegisterFrom is a Checker.Register that pushes the contract's base commit from the git
// repository at gitDir to the execute queue's bare remote for it.
func RegisterFrom(remotes localgit.Remotes, gitDir string) func(context.Context, contracts.Contract) error {
	return func(ctx context.Context, c contracts.Contract) error {
		_, err := remotes.Register(ctx, c.Repo.Owner, c.Repo.Name, gitDir, c.Repo.BaseCommitSHA)
		return err
	}
}

// BuildFailedError says the base commit did not build: none of its criteria could be run.
type BuildFailedError struct {
	SHA  string
	Step string
	Log  string
	// Cause is the line of the step's log that shows why, Next what the requester can do.
	Cause, Next string
}

func (e *BuildFailedError) Error() string {
	msg := fmt.Sprintf("the base commit %s does not build (step %s failed), so its criteria cannot be checked", contracts.ShortSHA(e.SHA), e.Step)
	if e.Cause != "" {
		msg += ": " + e.Cause
	}
	if e.Next != "" {
		msg += ". Next: " + e.Next
	}
	if tail := lastLines(e.Log, 5); tail != "" {
		msg += "\n(log " + tail + ")"
	}
	return msg
}

// CheckBase runs BaseCheckWorkflow for c and classifies the verifier's evidence with the
// same semantics the policy judges by.
func (q *Queued) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	if q.Client == nil {
		return nil, fmt.Errorf("basecheck: no Temporal client")
	}
	start := time.Now()
	if q.Register != nil {
		if err := q.Register(ctx, c); err != nil {
			return nil, fmt.Errorf("make the base commit available to the execute queue: %w", err)
		}
	}
	hash, err := contracts.Hash(c)
	if err != nil {
		return nil, err
	}
	variants := authoring.LazyVariants(c)
	id := workflowID(c.ContractID)
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: contractapi.ControlQueue}
	if q.Key != "" {
		id = keyedWorkflowID(c.ContractID, hash, q.Key)
		opts = client.StartWorkflowOptions{ID: id, TaskQueue: contractapi.ControlQueue,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	}
	run, err := q.Client.ExecuteWorkflow(ctx, opts, contractapi.BaseCheckWorkflowName, contractapi.BaseCheckInput{Contract: c, ContractHash: hash, Variants: variants})
	switch {
	case q.Key != "" && contractclient.AlreadyStarted(err):
		run = q.Client.GetWorkflow(ctx, id, "") // finished before: its result stands
	case err != nil:
		return nil, fmt.Errorf("start the base check: %w", err)
	}
	if q.Started != nil {
		q.Started(id)
	}
	var res contractapi.BaseCheckResult
	if err := run.Get(ctx, &res); err != nil {
		return nil, fmt.Errorf("base check %s: %w", id, err)
	}
	var buildMS int64
	for _, s := range res.Build.Steps {
		buildMS += s.DurationMS
	}
	if !res.Build.Passed {
		e := &BuildFailedError{SHA: c.Repo.BaseCommitSHA}
		if n := len(res.Build.Steps); n > 0 {
			last := res.Build.Steps[n-1]
			e.Step, e.Log, e.Cause, e.Next = last.Name, last.Log, last.Cause, last.Next
		}
		return nil, e
	}
	rep := authoring.Classify(c, res.Verify.Evidence, c.Repo.BaseCommitSHA)
	rep.BuildMS, rep.FailingChecks = buildMS, res.Build.Preexisting()
	rep.DurationMS = time.Since(start).Milliseconds()
	rep.Where, rep.ProofDir = authoring.WhereQueues, res.Verify.ProofDir
	rep.Variants = variantReports(c, variants, res.Variants)
	rep.Notes = append(rep.Notes, "checked on the execute and verify queues (workflow "+id+")")
	return rep, nil
}

// variantReports classifies each lazy variant's verifications (of the variants asked for)
// with the policy's semantics.
func variantReports(c contracts.Contract, asked []contracts.Variant, runs []contractapi.VariantRun) []authoring.VariantReport {
	variants := map[string]contracts.Variant{}
	for _, v := range asked {
		variants[v.Name] = v
	}
	out := make([]authoring.VariantReport, 0, len(runs))
	for _, run := range runs {
		vr := authoring.VariantReport{Variant: variants[run.Name], Error: run.Error}
		for _, v := range run.Verify {
			part := contracts.Contract{Repo: c.Repo, Verifier: c.Verifier}
			if v.Evidence != nil {
				for _, r := range v.Evidence.Results {
					if i := slices.IndexFunc(c.Criteria, func(cr contracts.Criterion) bool { return cr.ID == r.CriterionID }); i >= 0 {
						part.Criteria = append(part.Criteria, c.Criteria[i])
					}
				}
				if v.Evidence.Variant != contracts.VariantID(vr.Variant) {
					vr.Error = fmt.Sprintf("the verifier measured variant %q, not %q", v.Evidence.Variant, contracts.VariantID(vr.Variant))
					break
				}
			}
			vr.Results = append(vr.Results, authoring.Classify(part, v.Evidence, c.Repo.BaseCommitSHA).Results...)
			if vr.ProofDir == "" {
				vr.ProofDir = v.ProofDir
			}
		}
		out = append(out, vr)
	}
	return out
}

// Ready says why the cluster cannot run a base check now: a queue no worker polls would
// leave the check waiting forever, so callers ask first and choose another way or stop.
func Ready(ctx context.Context, cl client.Client) error {
	for _, q := range []string{contractapi.ControlQueue, contractapi.ExecuteQueue, contractapi.VerifyQueue} {
		resp, err := cl.DescribeTaskQueue(ctx, q, contractclient.PollerType(q))
		if err != nil {
			return fmt.Errorf("describe task queue %s: %w", q, err)
		}
		if len(resp.GetPollers()) == 0 {
			return fmt.Errorf("no worker polls the %s queue", q)
		}
	}
	return nil
}

// workflowID names one base check; checks of the same contract never collide. The
// "discriminate-" prefix is the base check's older name, kept so IDs stay comparable with
// recorded histories and running checks.
func workflowID(contractID string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "discriminate-" + contractID + "-" + hex.EncodeToString(b)
}

// keyedWorkflowID names the check of one contract (by hash) for one caller key.
func keyedWorkflowID(contractID, hash, key string) string {
	sum := sha256.Sum256([]byte(key + "|" + hash))
	return "discriminate-" + contractID + "-" + hex.EncodeToString(sum[:6])
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
