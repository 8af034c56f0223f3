package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Watching a contract that started a while ago prints each past event at its own time since
// the first event, not 0.0s for all of them.
func TestPastEventsShowTheirOwnTimes(t *testing.T) {
	begin := time.Now().Add(-90 * time.Second).UTC()
	at := func(d time.Duration) string { return begin.Add(d).Format(time.RFC3339Nano) }
	st := contractapi.Status{State: contracts.StateApproved, Timeline: []contracts.Event{
		{Type: contracts.EventQuoted, At: at(0), Data: map[string]string{"hash": strings.Repeat("a", 64)}},
		{Type: contracts.EventApproved, At: at(12500 * time.Millisecond), Data: map[string]string{"approver": "ann", "hash": strings.Repeat("a", 64)}},
		{Type: contracts.EventPaymentAuthorized, At: at(61 * time.Second)},
	}}
	var out strings.Builder
	(&Printer{Out: &out}).Update(st)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"[   0.0s] quoted", "[  12.5s] approved", "[  61.0s] payment authorized"}
	if len(lines) != len(want) {
		t.Fatalf("lines:\n%s", out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start %q", i, lines[i], w)
		}
	}
}
