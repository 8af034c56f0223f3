package chat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
)

// replayState is what a replayed envelope must not change.
type replayState struct {
	journal   string
	list      string
	status    contractapi.Status
	history   int
	workflows []string // id/run id of every execution
	events    int      // what the capturing peer has heard since the burst
}

func snapshotForReplay(t *testing.T, c client.Client, lp *loadPeers, dataDir, tAddr, contract string) replayState {
	t.Helper()
	j, err := os.ReadFile(filepath.Join(dataDir, "chat", "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var st replayState
	st.journal = string(j)
	st.list = signoffproc.CLI(t, "contract", "list", "--json", "--data-dir", dataDir)
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, "contract", "status", contract, "--json", "--data-dir", dataDir, "--temporal-address", tAddr)), &st.status); err != nil {
		t.Fatal(err)
	}
	st.history = temporaltest.HistorySize(t, c, contractapi.WorkflowID(contract))
	var token []byte
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: temporal.DefaultNamespace, NextPageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.GetExecutions() {
			st.workflows = append(st.workflows, e.GetExecution().GetWorkflowId()+"/"+e.GetExecution().GetRunId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	sort.Strings(st.workflows)
	lp.mu.Lock()
	st.events = len(lp.events[captureAgent])
	lp.mu.Unlock()
	return st
}

// replayCaptured posts the two captured "cancel" envelopes again, after the restart, to the
// session that now has a quoted contract: the long one within its expiry, the short one once
// the clock has passed its expires. Both must get the reference's 200 {} and change nothing.
// A replay the bridge took would be journaled before that answer, so the journal, read after
// the posts, shows it at once; the contract's state and history and the workflows show
// anything it reached.
func replayCaptured(t *testing.T, c client.Client, lp *loadPeers, dataDir, public, tAddr string) {
	t.Helper()
	lp.mu.Lock()
	captured := map[string]loadEvent{} // kind -> the captured envelope
	byID := map[string]loadEvent{}
	for _, e := range lp.capture {
		if e.Event == "captured" {
			byID[e.MsgID] = e
		}
	}
	for _, e := range lp.capture {
		if e.Event == "capture_sent" {
			if e.Status != "delivered" {
				lp.mu.Unlock()
				t.Fatalf("captured %s cancel was not delivered the first time: %+v", e.Kind, e)
			}
			captured[e.Kind] = byID[e.MsgID]
		}
	}
	contract := ""
	for _, id := range quotesOf(lp.events[captureAgent]) {
		contract = id
	}
	lp.mu.Unlock()
	long, short := captured["long"], captured["short"]
	if long.Envelope == "" || short.Envelope == "" || contract == "" {
		t.Fatalf("capture incomplete: long %+v short %+v contract %q\n%s", long, short, contract, lp.dump())
	}
	before := snapshotForReplay(t, c, lp, dataDir, tAddr, contract)
	if before.status.State != contracts.StateQuoted {
		t.Fatalf("contract %s is %s before the replays, want quoted", contract, before.status.State)
	}
	post := func(name string, e loadEvent) {
		t.Helper()
		resp, err := http.Post("http://"+public+"/submit", "application/json", strings.NewReader(e.Envelope))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "{}" {
			t.Fatalf("replay %s: %d %s", name, resp.StatusCode, body)
		}
	}
	if now := time.Now().Unix(); now >= long.Expires {
		t.Fatalf("the long capture expired (%d, now %d) before it could be replayed within its expiry", long.Expires, now)
	}
	post("within its expiry", long)
	for time.Now().Unix() <= short.Expires { // the envelope's own expires, against the clock
		time.Sleep(time.Until(time.Unix(short.Expires+1, 0)))
	}
	post("after its expiry", short)
	after := snapshotForReplay(t, c, lp, dataDir, tAddr, contract)
	if after.journal != before.journal {
		t.Errorf("a replay changed the chat journal:\nbefore:\n%s\nafter:\n%s", before.journal, after.journal)
	}
	if after.status.State != before.status.State || len(after.status.Timeline) != len(before.status.Timeline) || after.history != before.history {
		t.Errorf("a replay changed contract %s: state %s -> %s, timeline %d -> %d events, history %d -> %d bytes",
			contract, before.status.State, after.status.State, len(before.status.Timeline), len(after.status.Timeline), before.history, after.history)
	}
	if after.list != before.list {
		t.Errorf("a replay changed the contract index:\n%s\n%s", before.list, after.list)
	}
	if !slices.Equal(after.workflows, before.workflows) {
		t.Errorf("workflows before the replays %v, after %v", before.workflows, after.workflows)
	}
	// Anything the capturing peer hears from now that answers a cancel, or acknowledges a
	// captured message again, came from a replay. (Not a barrier: the journal above is the
	// proof that no replay was taken; this names what one would have caused.)
	lp.mu.Lock()
	for _, e := range lp.events[captureAgent][before.events:] {
		if (e.Event == "ack" && (e.Acknowledged == long.MsgID || e.Acknowledged == short.MsgID)) ||
			(e.Event == "chat" && strings.Contains(strings.ToLower(e.Text), "cancel")) {
			t.Errorf("the capturing peer heard, after the replays: %+v", e)
		}
	}
	lp.mu.Unlock()
	if t.Failed() {
		return
	}
	t.Logf("replayed the captured cancels of %s (within its expiry, and %ds after the other's): nothing changed", contract, time.Now().Unix()-short.Expires)
}
