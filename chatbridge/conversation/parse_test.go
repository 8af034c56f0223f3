package conversation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/workflows/contractapi"
)

func TestParse(t *testing.T) {
	for text, want := range map[string]string{
		"help": verbHelp, "Hi!": verbHelp, "run W1": verbRun, "run w2": verbRun, "RUN P1": verbRun,
		"run the tests on the login page": verbTask, "approve " + strings.Repeat("a", 64): verbApprove,
		"approve c1 " + strings.Repeat("a", 64): verbApprove, "pay": verbPay, "authorize": verbPay, "authorize payment": verbPay,
		"cancel": verbCancel, "cancel w1-watchlist-mobile": verbCancel, "status": verbStatus, "status W1": verbStatus,
		"retry": verbRetry, "abandon": verbAbandon, "list": verbList, "thanks": verbUnknown, "ok then": verbUnknown,
		"make the Watchlist page work well on mobile":    verbTask,
		"cancel the header on the watchlist page please": verbTask,
	} {
		if got := parse(text).verb; got != want {
			t.Errorf("parse(%q) = %s, want %s", text, got, want)
		}
	}
}

// Status and the other short commands tolerate punctuation, case and polite words.
func TestParseIsTolerant(t *testing.T) {
	for text, want := range map[string]command{
		"Status w1.":         {verb: verbStatus, args: []string{"w1"}},
		"status W1 please":   {verb: verbStatus, args: []string{"W1"}},
		"STATUS W1?":         {verb: verbStatus, args: []string{"W1"}},
		"please status w2!":  {verb: verbStatus, args: []string{"w2"}},
		"status, please":     {verb: verbStatus, args: []string{}},
		"run W1.":            {verb: verbRun, args: []string{"W1"}},
		"Cancel.":            {verb: verbCancel, args: []string{}},
		"list please":        {verb: verbList, args: []string{}},
		"status page errors": {verb: verbTask},
	} {
		got := parse(text)
		if got.verb != want.verb || (want.args != nil && strings.Join(got.args, " ") != strings.Join(want.args, " ")) {
			t.Errorf("parse(%q) = %+v, want %+v", text, got, want)
		}
	}
}

func TestRequesterIDStaysValid(t *testing.T) {
	long := strings.Repeat("a", 51) + "-0123456789"
	id := requesterID(long, "agent1qxyz")
	if len(id) > 64 || !strings.HasSuffix(id, id[len(id)-6:]) || strings.Contains(id, "--") {
		t.Fatalf("id %q", id)
	}
	if requesterID("x-1", "a") == requesterID("x-1", "b") {
		t.Fatal("two requesters share an id")
	}
}

func TestTidyGoal(t *testing.T) {
	for in, want := range map[string]string{
		"make the page work in ":        "make the page work",
		"  : make the page work":        "make the page work",
		"make the page,   work well on": "make the page, work well",
	} {
		if got := tidyGoal(in); got != want {
			t.Errorf("tidyGoal(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every step a watcher announces comes once per status, in words a person reads.
func TestSteps(t *testing.T) {
	st := contractapi.Status{ContractID: "c1", Repo: "o/r", State: contracts.StateBuilding, Attempt: 1, MaxAttempts: 3,
		Payment: capability.PaymentState{Local: true, State: capability.PaymentAuthorized}}
	got := steps(st, "local")
	if len(got) != 1 || got[0].key != "authorized" || !strings.Contains(got[0].text, "Attempt 1 of 3 starts: cloning o/r") {
		t.Fatalf("steps %+v", got)
	}
	st.State, st.Attempt = contracts.StateRepairing, 2
	got = steps(st, "local")
	if len(got) != 1 || strings.Contains(got[0].text, "Attempt 1") {
		t.Fatalf("steps %+v", got)
	}
	st = contractapi.Status{ContractID: "c1", State: contracts.StateCancelled, Final: true}
	if got := steps(st, "local"); len(got) != 1 || !strings.Contains(got[0].text, "no payment was authorized") {
		t.Fatalf("steps %+v", got)
	}
	st = contractapi.Status{ContractID: "c1", State: contracts.StateExpired, Final: true}
	if got := steps(st, "local"); len(got) != 1 || got[0].key != "expired" {
		t.Fatalf("steps %+v", got)
	}
}

// A verification error reads as words a user can act on: no empty commit, no error chain.
func TestVerdictWordsHideInternalErrors(t *testing.T) {
	chain := "preview: activity error (type: StartPreview, scheduledEventID: 31, startedEventID: 32, identity: 123@host): build: exit status 1: npm ERR! enoent"
	b := &contracts.Bundle{Reasons: []contracts.Reason{{Rule: policy.RuleIntegrity, Code: "capability_failed", Message: chain}}}
	summary := "c1: verification error on attempt 1 of 3 (commit ). " + chain + "; Payment authorized. Proof: http://x/"
	got := chatSummaryWords(summary, b)
	for _, bad := range []string{"(commit )", "activity error", "exit status", "scheduledEventID"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary still says %q: %s", bad, got)
		}
	}
	if !strings.Contains(got, "the preview step could not run on Signoff's side") || !strings.Contains(got, "; Payment authorized.") {
		t.Errorf("summary %q", got)
	}
	if got := chatSummaryWords("c1: satisfied on attempt 1 (commit abc123). ok", &contracts.Bundle{}); got != "c1: satisfied on attempt 1 (commit abc123). ok" {
		t.Errorf("a named commit was changed: %s", got)
	}
	n := plainVerdictNotice("Attempt 2: verification error. verify: " + chain)
	if strings.Contains(n, "activity error") || !strings.HasPrefix(n, "Attempt 2: verification error. The verification could not complete") {
		t.Errorf("notice %q", n)
	}
}

// TestBusyIsNotARefusal: a base check that only timed out is answered as "not ready, ask
// again", never as a contract refused.
func TestBusyIsNotARefusal(t *testing.T) {
	busy := refusalText(fmt.Errorf("draft: %w", &authoring.BaseCheckError{Code: authoring.BaseBusy, Reason: "the checks timed out; ask again in a few minutes"}))
	if !strings.HasPrefix(busy, "Your quote is not ready: ") || strings.Contains(busy, "No contract offered") {
		t.Errorf("busy: %q", busy)
	}
	if weak := refusalText(&authoring.BaseCheckError{Code: authoring.BaseWeak, Reason: "a lazy variant passes"}); !strings.HasPrefix(weak, "No contract offered: ") {
		t.Errorf("weak: %q", weak)
	}
}
