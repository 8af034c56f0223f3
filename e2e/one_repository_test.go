package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
)

// TestContractsOnOneRepositoryRunTogether: the repository lock guards only the publish (the
// branch and the pull request), so a contract does not wait for another on the same
// repository to settle. W5 and W1 are both contracts on the finance fixture: while W5 is
// paused for its operator after its verification errors, W1 executes, builds, verifies and
// settles; only then does W5's operator abandon it. Held for the whole run, as before, the
// lock kept W1 from its first attempt until W5 ended, and this test would fail by its
// deadline.
func TestContractsOnOneRepositoryRunTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture app twice and drives Chromium")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	st, env := preparedStack(ctx, t, t.TempDir())
	defer st.Close()
	runsDir := filepath.Join(signoffproc.RepoRoot(), "fixtures", "runs")
	w1, err := runs.Load(runsDir, "W1")
	if err != nil {
		t.Fatal(err)
	}
	w5, err := runs.Load(runsDir, "W5")
	if err != nil {
		t.Fatal(err)
	}
	if w1.Contract.Repo.Key() != w5.Contract.Repo.Key() {
		t.Fatalf("W1 is on %s and W5 on %s: the test needs one repository", w1.Contract.Repo.Key(), w5.Contract.Repo.Key())
	}
	var w1Final contractapi.Status
	w5Env := env
	w5Env.BeforeOperator = func(ctx context.Context, paused contractapi.Status) error {
		// W5 waits for a person, in its verification; W1 runs on the same repository now.
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Minute)
		defer wcancel()
		final, mismatches, err := w1.Replay(wctx, env)
		if err != nil {
			return fmt.Errorf("W1 while W5 is paused for its operator: %w", err)
		}
		if len(mismatches) > 0 {
			return fmt.Errorf("W1 beside W5 does not reproduce run.json: %v", mismatches)
		}
		w1Final = final
		return nil
	}
	w5Final, mismatches, err := w5.Replay(ctx, w5Env)
	if err != nil {
		t.Fatal(err)
	}
	if len(mismatches) > 0 {
		t.Errorf("W5 does not reproduce run.json: %v", mismatches)
	}
	// From the two timelines: W1 verified and settled after W5 paused and before W5's
	// operator answered.
	paused, answered := eventTime(t, w5Final, contracts.EventPausedForOperator), eventTime(t, w5Final, contracts.EventAbandoned)
	verified, settled := eventTime(t, w1Final, contracts.EventVerdict), eventTime(t, w1Final, contracts.EventPaymentCaptured)
	if !(paused.Before(verified) && settled.Before(answered)) {
		t.Errorf("W5 paused %s and was answered %s; W1 verified %s and settled %s: want W1 inside W5's pause", paused, answered, verified, settled)
	}
	t.Logf("W1 verified %s after W5 paused, and settled %s before W5's operator answered", verified.Sub(paused).Round(time.Second), answered.Sub(settled).Round(time.Second))
	temporaltest.RecordHistory(t, st.Client, contractapi.WorkflowID(w1.Contract.ContractID), "w1-lock-publish-only")
	temporaltest.RecordHistory(t, st.Client, contractapi.WorkflowID(w5.Contract.ContractID), "w5-lock-publish-only")
}

// eventTime is when the timeline's first event of a type happened.
func eventTime(t *testing.T, st contractapi.Status, typ string) time.Time {
	t.Helper()
	for _, e := range st.Timeline {
		if e.Type == typ {
			at, err := time.Parse(time.RFC3339Nano, e.At)
			if err != nil {
				t.Fatalf("%s at %q: %v", typ, e.At, err)
			}
			return at
		}
	}
	t.Fatalf("%s: no %s event on its timeline", st.ContractID, typ)
	return time.Time{}
}
