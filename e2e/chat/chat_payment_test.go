package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// scriptPeers is chatbridge/testdata/script_peer.py: uAgents reference agents that send what
// the test tells them, each in the conversation the bridge last spoke to it in.
type scriptPeers struct {
	*loadPeers
	mu    sync.Mutex
	stdin io.WriteCloser
}

func startScriptPeers(t *testing.T, py, loopback, bridge string, n int) *scriptPeers {
	t.Helper()
	var ports []string
	for range n {
		ports = append(ports, signoffproc.FreePort(t))
	}
	cmd := exec.Command(py, filepath.Join(signoffproc.RepoRoot(), "chatbridge", "testdata", "script_peer.py"), "--base", "http://127.0.0.1:"+loopback,
		"--bridge", bridge, "--ports", strings.Join(ports, ","), "--seed-prefix", "signoff script peer "+strconv.FormatInt(time.Now().UnixNano(), 36))
	cmd.Dir = t.TempDir() // uagents writes its key-value store into the working directory
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	sp := &scriptPeers{loadPeers: &loadPeers{events: make([][]loadEvent, n), change: make(chan struct{})}}
	cmd.Stderr = &lockedWriter{mu: &sp.loadPeers.mu, w: &sp.loadPeers.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sp.stdin = stdin
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }) // the process this test started, by PID
	go sp.read(t, out)
	sp.wait(t, "every peer started", 3*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev {
			if !slices.ContainsFunc(e, func(e loadEvent) bool { return e.Event == "started" }) {
				return false
			}
		}
		return true
	})
	return sp
}

// say has peer i send text, and returns the first message the bridge sends it afterwards that
// matches (every message when match is nil).
func (sp *scriptPeers) say(t *testing.T, i int, text string, match func(string) bool) string {
	t.Helper()
	sp.loadPeers.mu.Lock()
	from := len(sp.events[i])
	sp.loadPeers.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"i": i, "text": text})
	sp.mu.Lock()
	_, err := sp.stdin.Write(append(line, '\n'))
	sp.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var got string
	sp.wait(t, fmt.Sprintf("an answer to peer %d's %.40q", i, text), 5*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev[i][min(from, len(ev[i])):] {
			if e.Event == "chat" && (match == nil || match(e.Text)) {
				got = e.Text
				return true
			}
		}
		return false
	})
	return got
}

func (sp *scriptPeers) address(i int) string {
	sp.loadPeers.mu.Lock()
	defer sp.loadPeers.mu.Unlock()
	for _, e := range sp.events[i] {
		if e.Event == "started" {
			return e.Address
		}
	}
	return ""
}

// paymentPolls is how many times the contract's workflow has asked for the payment's state.
func paymentPolls(t *testing.T, c client.Client, id string) int {
	t.Helper()
	n := 0
	it := c.GetWorkflowHistory(context.Background(), contractapi.WorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		// An activity in contracts started before the local-reads version, a local activity's
		// marker after it.
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "PaymentStatus" {
			n++
		}
		if m := ev.GetMarkerRecordedEventAttributes(); m.GetMarkerName() == "LocalActivity" {
			for _, p := range m.GetDetails()["data"].GetPayloads() {
				var la struct{ ActivityType string }
				if json.Unmarshal(p.GetData(), &la) == nil && la.ActivityType == "PaymentStatus" {
					n++
				}
			}
		}
	}
	return n
}

// TestChatPaymentAndStrangers is issue 29's payment and isolation must-show with real uagents
// peers against a real `signoff dev`: requesters A and C approve their quotes; stranger B sends
// every command on A's contract and learns nothing (each answer is, byte for byte, the one an
// id nobody started gets) and changes nothing; A pays after the workflow has polled the
// payment twice (a minute after the link) and C pays after `signoff dev` was SIGKILLed and
// started again. Both payments are authorized.
func TestChatPaymentAndStrangers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process with Python uAgents peers and restarts it")
	}
	root := signoffproc.RepoRoot()
	signoffproc.RequireSetup(t, filepath.Join(root, ".bin", "stripe-mock"), "go tool task stripe:setup")
	py := chatVenvPython(t)
	dataDir := t.TempDir()
	dev := startChatDev(t, dataDir, "--chat-base-check=false")
	const a, b, cc = 0, 1, 2
	sp := startScriptPeers(t, py, dev.loopback, dev.agent, 3)
	quoteRe := regexp.MustCompile(`Quoted contract (\S+) .*(?s:.*)Contract hash: ([0-9a-f]{64})`)
	quoted := func(i int) (id, hash string) {
		t.Helper()
		text := sp.say(t, i, "make the Watchlist page work well on mobile", func(s string) bool { return strings.HasPrefix(s, "Quoted contract") })
		m := quoteRe.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("peer %d's quote: %q", i, text)
		}
		return m[1], m[2]
	}
	idA, hashA := quoted(a)
	idC, hashC := quoted(cc)
	for _, p := range []struct {
		i        int
		id, hash string
	}{{a, idA, hashA}, {cc, idC, hashC}} {
		if got := sp.say(t, p.i, "approve "+p.hash, nil); !strings.HasPrefix(got, "Approved "+p.id) {
			t.Fatalf("peer %d's approval: %q", p.i, got)
		}
	}
	c := signoffproc.DialDev(t, dataDir, dev.temporal)
	cl := contractclient.New(c)
	before, err := cl.Status(context.Background(), idA)
	if err != nil {
		t.Fatal(err)
	}

	// The stranger: every answer about A's contract is the answer about an id nobody started.
	nobody := idA[:strings.LastIndex(idA, "-")+1] + strings.Repeat("0", len(idA)-strings.LastIndex(idA, "-")-1)
	otherHash := strings.Repeat("0", 64)
	for _, cmd := range []struct{ onA, onNobody string }{
		{"status " + idA, "status " + nobody},
		{"approve " + hashA, "approve " + otherHash},
		{"approve " + idA + " " + hashA, "approve " + nobody + " " + otherHash},
		{"cancel " + idA, "cancel " + nobody},
		{"retry " + idA, "retry " + nobody},
		{"abandon " + idA, "abandon " + nobody},
		{"pay", "pay"},
		{"list", "list"},
	} {
		onA := sp.say(t, b, cmd.onA, nil)
		onNobody := sp.say(t, b, cmd.onNobody, nil)
		norm := strings.NewReplacer(idA, "<id>", hashA, "<hash>", contracts.ShortSHA(hashA), "<hash>", nobody, "<id>", otherHash, "<hash>", contracts.ShortSHA(otherHash), "<hash>")
		if norm.Replace(onA) != norm.Replace(onNobody) {
			t.Errorf("%q told the stranger %q, where an id nobody started gets %q", cmd.onA, onA, onNobody)
		}
		for _, secret := range []string{hashA, contracts.ShortSHA(hashA), idC, sp.address(a), "Watchlist", "file://", "/proofs/"} {
			if strings.Contains(onA, secret) {
				t.Errorf("%q told the stranger %q, which holds %q", cmd.onA, onA, secret)
			}
		}
	}
	after, err := cl.Status(context.Background(), idA)
	if err != nil {
		t.Fatal(err)
	}
	if after.State != before.State || len(after.Timeline) != len(before.Timeline) {
		t.Errorf("the stranger changed A's contract: %s with %d events, then %s with %d", before.State, len(before.Timeline), after.State, len(after.Timeline))
	}

	// Two payment polls on each (the default poll is 30 s): the link is a minute old.
	for _, id := range []string{idA, idC} {
		for deadline := time.Now().Add(signoffproc.HangLimit(5 * time.Minute)); paymentPolls(t, c, id) < 2; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: fewer than two payment polls within 5m", id)
			}
			time.Sleep(time.Second) // polling another process's workflow history
		}
	}
	authorized := func(cl *contractclient.Client, id string) {
		t.Helper()
		for deadline := time.Now().Add(signoffproc.HangLimit(2 * time.Minute)); ; {
			st, err := cl.Status(context.Background(), id)
			if err == nil && slices.ContainsFunc(st.Timeline, func(e contracts.Event) bool { return e.Type == contracts.EventPaymentAuthorized }) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no payment_authorized within 2m (%v): %+v", id, err, st.Payment)
			}
			time.Sleep(200 * time.Millisecond) // polling another process's workflow
		}
	}
	// The workflow's own notices may come first: the answer to pay is the one that names it.
	sp.say(t, a, "pay", func(s string) bool { return strings.HasPrefix(s, "Local checkout completed for "+idA) })
	authorized(cl, idA)

	dev.Kill()
	dev.Start()
	signoffproc.WaitOutput(t, dev.Proc, "Ctrl-C stops.", 3*time.Minute)
	c2 := signoffproc.DialDev(t, dataDir, dev.temporal)
	sp.say(t, cc, "pay", func(s string) bool { return strings.HasPrefix(s, "Local checkout completed for "+idC) })
	authorized(contractclient.New(c2), idC)
}
