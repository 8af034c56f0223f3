package workflows_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/contractapi"
)

// recorded lists replays/*.json after checking each against the append-only manifest:
// a history edited or dropped after recording fails here, before any replay.
func recorded(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "replays")
	f, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		t.Fatalf("replays/MANIFEST: %v", err)
	}
	defer f.Close()
	var files []string
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("MANIFEST line %q", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("history %s in the manifest is gone: %v", name, err)
		}
		got := sha256.Sum256(b)
		if hex.EncodeToString(got[:]) != sum {
			t.Fatalf("history %s changed after recording (histories are append-only)", name)
		}
		listed[name] = true
		files = append(files, filepath.Join(dir, name))
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range all {
		if !listed[filepath.Base(p)] {
			t.Fatalf("%s is not in replays/MANIFEST", filepath.Base(p))
		}
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories")
	}
	return files
}

// quiet keeps the SDK's panic report for the deliberately changed workflow off the output.
var quiet = sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// replayer registers the workflows the recorded histories ran: the contract workflow, the
// base check, the chat quote and the repo lock, as they are now or each with one change that must go behind GetVersion.
func replayer(changed bool) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	if changed {
		r.RegisterWorkflowWithOptions(changedWorkflow, workflow.RegisterOptions{Name: contractapi.ContractWorkflowName})
		r.RegisterWorkflowWithOptions(changedBaseCheck, workflow.RegisterOptions{Name: contractapi.BaseCheckWorkflowName})
		r.RegisterWorkflowWithOptions(changedQuote, workflow.RegisterOptions{Name: contractapi.QuoteWorkflowName})
		r.RegisterWorkflowWithOptions(changedLock, workflow.RegisterOptions{Name: contractapi.RepoLockWorkflowName})
		return r
	}
	r.RegisterWorkflowWithOptions(workflows.ContractWorkflow, workflow.RegisterOptions{Name: contractapi.ContractWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.BaseCheckWorkflow, workflow.RegisterOptions{Name: contractapi.BaseCheckWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.QuoteWorkflow, workflow.RegisterOptions{Name: contractapi.QuoteWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.RepoLockWorkflow, workflow.RegisterOptions{Name: contractapi.RepoLockWorkflowName})
	return r
}

// TestReplayRecordedHistories replays every history recorded from real runs on the embedded
// server against the current workflow code: a change that breaks determinism fails here.
func TestReplayRecordedHistories(t *testing.T) {
	for _, f := range recorded(t) {
		if err := replayer(false).ReplayWorkflowHistoryFromJSONFile(quiet, f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

// changedWorkflow is the contract workflow with one extra timer up front: the kind of change
// that must go behind workflow.GetVersion.
func changedWorkflow(ctx workflow.Context, in contractapi.ContractInput) (contractapi.Status, error) {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return contractapi.Status{}, err
	}
	return workflows.ContractWorkflow(ctx, in)
}

// changedBaseCheck is the base check with the same extra timer.
func changedBaseCheck(ctx workflow.Context, in contractapi.BaseCheckInput) (contractapi.BaseCheckResult, error) {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return contractapi.BaseCheckResult{}, err
	}
	return workflows.BaseCheckWorkflow(ctx, in)
}

// changedQuote is the chat quote workflow with the same extra timer.
func changedQuote(ctx workflow.Context, in contractapi.QuoteRequest) (contractapi.QuoteReply, error) {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return contractapi.QuoteReply{}, err
	}
	return workflows.QuoteWorkflow(ctx, in)
}

// changedLock is the repo lock with the same extra timer.
func changedLock(ctx workflow.Context, repo string) error {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return err
	}
	return workflows.RepoLockWorkflow(ctx, repo)
}

// TestReplayCatchesAChangedWorkflow proves the replay test can fail.
func TestReplayCatchesAChangedWorkflow(t *testing.T) {
	for _, f := range recorded(t) {
		if err := replayer(true).ReplayWorkflowHistoryFromJSONFile(quiet, f); err == nil {
			t.Errorf("%s replayed against a changed workflow", filepath.Base(f))
		}
	}
}

// recordedHistories reads every recorded history.
func recordedHistories(t *testing.T) []*historypb.History {
	t.Helper()
	var hs []*historypb.History
	for _, f := range recorded(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h := &historypb.History{}
		if err := protojson.Unmarshal(b, h); err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		hs = append(hs, h)
	}
	return hs
}

// TestReplayCoversTheApproveUpdate: at least one recorded history took its approval through
// the approve update (and so through the update handler on replay), not only the signal.
func TestReplayCoversTheApproveUpdate(t *testing.T) {
	for _, h := range recordedHistories(t) {
		for _, ev := range h.GetEvents() {
			if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil &&
				a.GetAcceptedRequest().GetInput().GetName() == contractapi.UpdateApprove {
				return
			}
		}
	}
	t.Fatalf("no recorded history accepted the %s update", contractapi.UpdateApprove)
}

// TestReplayCoversLocalBookkeeping: at least one recorded history ran the index update and the
// notice as local activities (versionLocalBookkeeping), so replay goes through that branch too.
func TestReplayCoversLocalBookkeeping(t *testing.T) {
	requireLocalActivities(t, "UpdateIndex", "Notify")
}

// TestReplayCoversLocalReads: at least one recorded history read the payment's status and the
// pull request's head as local activities (versionLocalReads).
func TestReplayCoversLocalReads(t *testing.T) {
	requireLocalActivities(t, "PaymentStatus", "PRHead")
}

// TestReplayCoversLocalRecords: at least one recorded history wrote the signed bundle and the
// signed settlement as local activities (versionLocalRecords).
func TestReplayCoversLocalRecords(t *testing.T) {
	requireLocalActivities(t, "RecordAttempt", "RecordSettlement")
}

// TestReplayCoversTheLockByUpdate: recorded histories asked the repo lock by update and gave
// it back by signal from local activities (versionLockByUpdate), and a recorded lock granted
// by update and by signal (versionLockGrantByUpdate).
func TestReplayCoversTheLockByUpdate(t *testing.T) {
	requireLocalActivities(t, "AcquireLock", "ReleaseLock")
	for _, h := range recordedHistories(t) {
		byUpdate, bySignal := false, false
		for _, ev := range h.GetEvents() {
			if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil &&
				a.GetAcceptedRequest().GetInput().GetName() == contractapi.UpdateLockAcquire {
				byUpdate = true
			}
			if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetSignalName() == contractapi.SignalLockGranted {
				bySignal = true
			}
		}
		if byUpdate && bySignal {
			return
		}
	}
	t.Fatalf("no recorded lock took the %s update and granted by signal", contractapi.UpdateLockAcquire)
}

// requireLocalActivities fails unless one recorded history ran every one of names as a local
// activity.
func requireLocalActivities(t *testing.T, names ...string) {
	t.Helper()
	for _, h := range recordedHistories(t) {
		kinds := map[string]bool{}
		for _, ev := range h.GetEvents() {
			a := ev.GetMarkerRecordedEventAttributes()
			if a.GetMarkerName() != "LocalActivity" {
				continue
			}
			var m struct{ ActivityType string }
			for _, p := range a.GetDetails()["data"].GetPayloads() {
				if err := json.Unmarshal(p.GetData(), &m); err == nil {
					kinds[m.ActivityType] = true
				}
			}
		}
		if !slices.ContainsFunc(names, func(n string) bool { return !kinds[n] }) {
			return
		}
	}
	t.Fatalf("no recorded history ran %s as local activities", strings.Join(names, " and "))
}
