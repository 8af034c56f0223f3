package chat_test

// Ten uAgents reference agents (the real Python library, in one process) ask `signoff dev`
// for a task at the same moment, on a busy host (a CPU hog in this test unless the host is
// busy already, as in the suite); once the first quote
// is out, `signoff dev` is SIGKILLed and started again on the same data dir. Every requester
// is acknowledged before any work for its message starts (the quote workflow is started
// after the bridge logged the ack out), told its quote is coming (or its place in line), and
// ends with exactly one quote; nothing is quoted twice. Ack latency is reported as the bridge
// measured it and as each peer did; it is a figure here, not an assertion (see
// chatbridge.BenchmarkAckLatency for the number to watch).
//
// Before the burst, one agent sends "cancel" twice in its session and the envelopes are
// captured as the library posted them. After the restart, when that session has a quoted
// contract, both are posted again, one within its expiry and one after it: neither may change
// the contract, its timeline or workflow history, the chat journal, or the set of workflows.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/internal/cpuhog"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
)

// loadEvent is one "PEER {json}" line of chatbridge/testdata/load_peer.py.
type loadEvent struct {
	Event        string  `json:"event"`
	I            int     `json:"i"`
	Address      string  `json:"address"`
	MsgID        string  `json:"msg_id"`
	Acknowledged string  `json:"acknowledged"`
	AckMS        float64 `json:"ack_ms"`
	SendMS       float64 `json:"send_ms"`
	Matches      bool    `json:"matches"`
	Text         string  `json:"text"`
	Status       string  `json:"status"`
	Host         string  `json:"host"`
	Session      string  `json:"session"`
	N            int     `json:"n"`
	// The capture phase (--capture): which envelope, and the envelope as posted.
	T0Wall   float64 `json:"t0_wall"` // unix seconds, just before the send
	AtWall   float64 `json:"at_wall"` // unix seconds, the ack's handler
	Phase    string  `json:"phase"`
	Kind     string  `json:"kind"`
	Expires  int64   `json:"expires"`
	Envelope string  `json:"envelope"`
	// seen is when the test read the event.
	seen time.Time
}

// captureAgent is the agent whose two "cancel" envelopes are captured before the burst.
const captureAgent = 0

// chatVenvPython is the project-local venv's Python with the pinned uagents (tasks/chat.yml).
func chatVenvPython(t testing.TB) string {
	t.Helper()
	py := filepath.Join(signoffproc.RepoRoot(), ".cache", "chat-venv", "bin", "python")
	out, err := exec.Command(py, "-c", "import importlib.metadata as m; print(m.version('uagents'), m.version('uagents-core'))").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0.26.1 0.4.12" {
		t.Fatalf("chat venv %s has uagents %q (%v): run `go tool task chat:setup`", py, strings.TrimSpace(string(out)), err)
	}
	return py
}

// chatDev is `signoff dev` run as a process for the chat tests, on ports of its own.
type chatDev struct {
	*signoffproc.Proc
	loopback string // the chat bridge's loopback port
	public   string // the public listener, host:port
	temporal string // the Temporal frontend, host:port
	agent    string // the chat agent's address
}

// startChatDev starts `signoff dev` on dataDir with the prepared runs and extra flags, and
// waits until it is ready and has announced its chat agent. Restarting the process (kill,
// start) keeps the same ports.
func startChatDev(tb testing.TB, dataDir string, extra ...string) *chatDev {
	tb.Helper()
	tport := signoffproc.FreePort(tb)
	d := &chatDev{loopback: signoffproc.FreePort(tb), public: "127.0.0.1:" + signoffproc.FreePort(tb), temporal: "127.0.0.1:" + tport}
	args := append([]string{"dev", "--data-dir", dataDir, "--temporal-port", tport, "--ui-port", "0",
		"--loopback", "127.0.0.1:" + d.loopback, "--public", d.public, "--runs-dir", filepath.Join(signoffproc.RepoRoot(), "fixtures", "runs")}, extra...)
	d.Proc = signoffproc.Start(tb, nil, args...)
	signoffproc.WaitOutput(tb, d.Proc, "Ctrl-C stops.", 3*time.Minute)
	agent := regexp.MustCompile(`Chat agent:\s+(agent1\w+)`).FindStringSubmatch(d.Output())
	if agent == nil {
		tb.Fatalf("signoff dev does not announce the chat agent:\n%s", d.Output())
	}
	d.agent = agent[1]
	return d
}

// cpuHog keeps every CPU busy until stopped (or the test ends): the load the chat must hold
// under.
func cpuHog(t testing.TB) (stop func()) {
	stop = cpuhog.Start()
	t.Cleanup(stop)
	return stop
}

// busyHost makes sure the host is busy until stopped (or the test ends): a CPU hog when it is
// quiet (the test run alone), nothing when it is busy already (in the suite, the long
// packages side by side keep two CPUs at a load of 2 or more each), where a hog would only
// add time.
func busyHost(t testing.TB) (stop func()) {
	stop = cpuhog.UnlessBusy(t.Logf)
	t.Cleanup(stop)
	return stop
}

// loadPeers is the Python process and what each of its agents saw, in arrival order.
type loadPeers struct {
	mu      sync.Mutex
	events  [][]loadEvent
	capture []loadEvent // the capture phase's events, kept out of events
	all     strings.Builder
	stderr  strings.Builder
	change  chan struct{}
}

// startLoadPeers runs chatbridge/testdata/load_peer.py: n uAgents reference agents that each
// send text to the bridge at one moment and acknowledge what they are told.
func startLoadPeers(t testing.TB, py, loopback, bridge string, n int, text string, extra ...string) *loadPeers {
	t.Helper()
	var ports []string
	for range n {
		ports = append(ports, signoffproc.FreePort(t))
	}
	args := append([]string{filepath.Join(signoffproc.RepoRoot(), "chatbridge", "testdata", "load_peer.py"), "--base", "http://127.0.0.1:" + loopback,
		"--bridge", bridge, "--ports", strings.Join(ports, ","), "--seed-prefix", "signoff load test peer " + strconv.FormatInt(time.Now().UnixNano(), 36),
		"--text", text}, extra...)
	cmd := exec.Command(py, args...)
	cmd.Dir = t.TempDir() // uagents writes its key-value store into the working directory
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	lp := &loadPeers{events: make([][]loadEvent, n), change: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &lp.mu, w: &lp.stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // the process this test started, by PID
	go lp.read(t, out)
	return lp
}

// read records the "PEER {json}" lines of a peer process's output until it ends; a peer that
// tried to reach anything but loopback fails the test.
func (p *loadPeers) read(t testing.TB, out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PEER "); ok {
			e := loadEvent{I: -1}
			if json.Unmarshal([]byte(rest), &e) == nil {
				if e.Event == "blocked" {
					t.Errorf("a peer tried to reach %s (not loopback)", e.Host)
				}
				p.add(e, sc.Text())
			}
		}
	}
}

func (p *loadPeers) add(e loadEvent, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.seen = time.Now()
	p.all.WriteString(line + "\n")
	if e.Phase == "capture" || e.Event == "captured" {
		p.capture = append(p.capture, e)
	} else if e.I >= 0 && e.I < len(p.events) {
		p.events[e.I] = append(p.events[e.I], e)
	}
	close(p.change)
	p.change = make(chan struct{})
}

// wait blocks until cond holds over the events or d passes (a hang-catcher).
func (p *loadPeers) wait(t testing.TB, what string, d time.Duration, cond func(ev [][]loadEvent) bool) {
	t.Helper()
	deadline := time.After(d)
	for {
		p.mu.Lock()
		ok, ch := cond(p.events), p.change
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s within %s:\n%s", what, d, p.dump())
		}
	}
}

func (p *loadPeers) dump() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "--- peers ---\n" + p.all.String() + "--- peers stderr ---\n" + p.stderr.String()
}

var quoteRe = regexp.MustCompile(`(?s)^Quoted contract (watchlist-[0-9a-f-]+) .*Contract hash: ([0-9a-f]{64})`)

func quotesOf(ev []loadEvent) (ids map[string]string) {
	ids = map[string]string{} // msg_id -> contract id
	for _, e := range ev {
		if m := quoteRe.FindStringSubmatch(e.Text); e.Event == "chat" && m != nil {
			ids[e.MsgID] = m[1]
		}
	}
	return ids
}

func TestChatLoadAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process with ten Python uAgents peers and restarts it")
	}
	root := signoffproc.RepoRoot()
	if _, err := os.Stat(filepath.Join(root, ".bin", "stripe-mock")); err != nil {
		t.Fatal("missing .bin/stripe-mock: run `go tool task stripe:setup`")
	}
	py := chatVenvPython(t)
	const peers = 10
	dataDir := t.TempDir()
	// Quotes are drafted one at a time so most of them are still queued or running when the
	// process is killed; the base check is off (each quote takes seconds, not a build).
	dev := startChatDev(t, dataDir, "--chat-base-check=false", "--chat-concurrent-quotes", "1")
	stopHog := busyHost(t)

	lp := startLoadPeers(t, py, dev.loopback, dev.agent, peers, "make the Watchlist page work well on mobile", "--capture", strconv.Itoa(captureAgent))

	// Phase 1: everyone acknowledged, then told the quote is coming or their place in line.
	lp.wait(t, "all peers started and sent", 3*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev {
			if !hasEvent(e, func(e loadEvent) bool { return e.Event == "sent" }) {
				return false
			}
		}
		return true
	})
	burst := time.Now()
	lp.wait(t, "an ack and a first answer for every peer", 2*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev {
			if !hasEvent(e, func(e loadEvent) bool { return e.Event == "ack" }) || !hasEvent(e, func(e loadEvent) bool { return e.Event == "chat" }) {
				return false
			}
		}
		return true
	})
	answered := time.Since(burst)
	var ackMS, sendMS []float64
	queued := 0
	burstMsgs := map[string]int{} // the burst's msg ids -> peer
	sessions := make([]string, peers)
	sentAt, ackAt := map[string]time.Time{}, map[string]time.Time{}
	lp.mu.Lock()
	for i, ev := range lp.events {
		var sent, first loadEvent
		for _, e := range ev {
			switch {
			case e.Event == "sent":
				sent = e
			case (e.Event == "ack" || e.Event == "chat") && first.Event == "":
				first = e
			}
		}
		if sent.Status != "delivered" || first.Event != "ack" || first.Acknowledged != sent.MsgID {
			lp.mu.Unlock()
			t.Fatalf("peer %d: sent %+v, first answer %+v (want the ack of its message first)\n%s", i, sent, first, lp.dump())
		}
		burstMsgs[sent.MsgID], sessions[i] = i, sent.Session
		ackMS, sendMS = append(ackMS, first.AckMS), append(sendMS, sent.SendMS)
		sentAt[sent.MsgID], ackAt[sent.MsgID] = wall(sent.T0Wall), wall(first.AtWall)
		for _, e := range ev {
			if e.Event == "chat" && strings.Contains(e.Text, "number ") && strings.Contains(e.Text, " in line") {
				queued++
				break
			}
		}
	}
	lp.mu.Unlock()
	// The bridge's own figures, from its log: receive (submit handler entered) to the ack
	// written to the peer's connection, and to the peer's answer.
	acks := bridgeAcks(dev.Output())
	var wireMS, doneMS, toBridgeMS, backMS []float64
	for id := range burstMsgs {
		a, ok := acks[id]
		if !ok {
			t.Fatalf("the bridge logged no acknowledgement of %s:\n%s", id, dev.Output())
		}
		wireMS, doneMS = append(wireMS, a.wireMS), append(doneMS, a.doneMS)
		// By the wall clock (one host): the peer's send until the bridge had the request, and
		// the ack on the wire until the peer's handler had it.
		toBridgeMS = append(toBridgeMS, ms(a.received.Sub(sentAt[id])))
		backMS = append(backMS, ms(ackAt[id].Sub(a.received.Add(time.Duration(a.wireMS*float64(time.Millisecond))))))
	}
	t.Logf("ack latency over %d peers, host busy: bridge receive to ack on the wire %s (to the peer's HTTP answer %s); "+
		"peer-side send to ack %s, of which the peer's send until the bridge had it %s and the ack on the wire until the peer's handler ran %s; "+
		"the library's send call returned after %s; every first answer within %s; %d told their place in line",
		peers, spread(wireMS), spread(doneMS), spread(ackMS), spread(toBridgeMS), spread(backMS), spread(sendMS), answered.Round(time.Millisecond), queued)

	// Phase 2: once the first quote is out, SIGKILL signoff dev and start it again.
	lp.wait(t, "a first quote", 3*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev {
			if len(quotesOf(e)) > 0 {
				return true
			}
		}
		return false
	})
	quotedBefore := 0
	crossed := -1 // a peer whose quote is drafted across the restart
	lp.mu.Lock()
	for i, e := range lp.events {
		if len(quotesOf(e)) > 0 {
			quotedBefore++
		} else if crossed < 0 {
			crossed = i
		}
	}
	lp.mu.Unlock()
	stopHog()                                 // the burst was measured under load; the restart need not be slowed too
	maps.Copy(acks, bridgeAcks(dev.Output())) // the log of this run is gone once it restarts
	dev.Kill()
	killedAt := time.Now()
	dev.Start()
	signoffproc.WaitOutput(t, dev.Proc, "Ctrl-C stops.", 3*time.Minute)
	t.Logf("signoff dev SIGKILLed with %d of %d quotes out; back in %s", quotedBefore, peers, time.Since(killedAt).Round(time.Millisecond))

	lp.wait(t, "a quote for every peer after the restart", 6*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev {
			if len(quotesOf(e)) == 0 {
				return false
			}
		}
		return true
	})
	t.Logf("all %d conversations quoted %s after the burst", peers, time.Since(burst).Round(time.Second))

	// Nothing lost, nothing twice: one quote per peer (one message id: a redelivery after the
	// restart repeats the same id), one contract each, all distinct, and never the apology.
	lp.mu.Lock()
	contracts := map[string]int{}
	for i, ev := range lp.events {
		q := quotesOf(ev)
		ids := map[string]bool{}
		for _, c := range q {
			ids[c] = true
		}
		if len(q) != 1 || len(ids) != 1 {
			lp.mu.Unlock()
			t.Fatalf("peer %d got %d quote messages for %d contracts: %v\n%s", i, len(q), len(ids), q, lp.dump())
		}
		for c := range ids {
			contracts[c]++
		}
		for _, e := range ev {
			if e.Event == "chat" && (strings.Contains(e.Text, "something went wrong") || strings.Contains(e.Text, "could not prepare a quote")) {
				lp.mu.Unlock()
				t.Fatalf("peer %d was told: %s", i, e.Text)
			}
		}
	}
	lp.mu.Unlock()
	if len(contracts) != peers {
		t.Fatalf("%d distinct contracts for %d peers: %v", len(contracts), peers, contracts)
	}
	// The index entry is written by the contract workflow's first activity, alongside the
	// quote workflow pushing the quote, so it may land just after the quote: wait for it.
	type entry struct {
		ContractID string `json:"contract_id"`
		State      string `json:"state"`
	}
	var entries []entry
	indexDone := func() bool {
		entries = nil
		if err := json.Unmarshal([]byte(signoffproc.CLI(t, "contract", "list", "--json", "--data-dir", dataDir)), &entries); err != nil {
			t.Fatal(err)
		}
		indexed := map[string]string{}
		for _, e := range entries {
			indexed[e.ContractID] = e.State
		}
		for c := range contracts {
			if indexed[c] != "quoted" {
				return false
			}
		}
		return len(entries) == peers
	}
	for deadline := time.Now().Add(2 * time.Minute); !indexDone(); {
		if time.Now().After(deadline) {
			t.Fatalf("the index does not hold the %d quoted contracts %v within 2m: %+v", peers, contracts, entries)
		}
		time.Sleep(200 * time.Millisecond) // polling another process's file through the CLI
	}
	c := signoffproc.DialDev(t, dataDir, dev.temporal)

	// Every ack was out before the work for its message started: the bridge logged the ack
	// delivered before Temporal recorded the start of the message's quote workflow.
	lp.mu.Lock()
	addrs := make([]string, peers)
	for i, ev := range lp.events {
		for _, e := range ev {
			if e.Event == "started" {
				addrs[i] = e.Address
			}
		}
	}
	lp.mu.Unlock()
	for id, i := range burstMsgs {
		d, err := c.DescribeWorkflowExecution(context.Background(), contractapi.QuoteWorkflowID(addrs[i], sessions[i], id), "")
		if err != nil {
			t.Fatalf("peer %d: quote workflow of %s: %v", i, id, err)
		}
		started := d.GetWorkflowExecutionInfo().GetStartTime().AsTime()
		if a := acks[id]; !a.at.Before(started) {
			t.Errorf("peer %d: the quote workflow started at %s, before the ack of its message was out (%s)", i, started.Format(time.RFC3339Nano), a.at.Format(time.RFC3339Nano))
		}
	}

	replayCaptured(t, c, lp, dataDir, dev.public, dev.temporal)

	if os.Getenv(temporaltest.EnvRecordHistories) != "" && crossed >= 0 {
		lp.mu.Lock()
		var sent loadEvent
		for _, e := range lp.events[crossed] {
			if e.Event == "sent" {
				sent = e
			}
		}
		addr := ""
		for _, e := range lp.events[crossed] {
			if e.Event == "started" {
				addr = e.Address
			}
		}
		lp.mu.Unlock()
		temporaltest.RecordHistory(t, c, contractapi.QuoteWorkflowID(addr, sent.Session, sent.MsgID), "c1-chat-quote-across-restart")
	}
	t.Logf("TestChatLoadAcrossRestart: %s", fmt.Sprint(time.Since(burst).Round(time.Second)))
}

func hasEvent(ev []loadEvent, match func(loadEvent) bool) bool {
	for _, e := range ev {
		if match(e) {
			return true
		}
	}
	return false
}

// bridgeAck is one "chat message acknowledged" line of the bridge's log.
type bridgeAck struct {
	wireMS, doneMS float64
	at             time.Time // delivery done
	received       time.Time
}

var ackLineRe = regexp.MustCompile(`msg="chat message acknowledged" .*?msg_id=(\S+) wire_ms=(\S+) done_ms=(\S+) acked_at=(\S+) received_at=(\S+)`)

func wall(unix float64) time.Time { return time.Unix(0, int64(unix*1e9)) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// bridgeAcks reads the acknowledgements the bridge logged, by acknowledged msg_id.
func bridgeAcks(log string) map[string]bridgeAck {
	out := map[string]bridgeAck{}
	for _, m := range ackLineRe.FindAllStringSubmatch(log, -1) {
		wire, err1 := strconv.ParseFloat(m[2], 64)
		done, err2 := strconv.ParseFloat(m[3], 64)
		at, err3 := time.Parse(time.RFC3339Nano, m[4])
		received, err4 := time.Parse(time.RFC3339Nano, m[5])
		if err1 == nil && err2 == nil && err3 == nil && err4 == nil {
			out[m[1]] = bridgeAck{wireMS: wire, doneMS: done, at: at, received: received}
		}
	}
	return out
}

// spread is "median X ms, max Y ms" of v.
func spread(v []float64) string {
	if len(v) == 0 {
		return "(none)"
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return fmt.Sprintf("median %.0f ms, max %.0f ms", s[len(s)/2], s[len(s)-1])
}
