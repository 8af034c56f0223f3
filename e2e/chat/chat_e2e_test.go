package chat_test

// A full local conversation through `signoff chat` (the built binary, a process speaking the
// signed Agent Chat Protocol) against `signoff dev` (a process: embedded Temporal, every
// worker, the chat bridge, the local Stripe test double), with the real Next.js preview and
// real Chromium, so the verdicts are real.

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
)

// chatLine is one line of `signoff chat --json`.
type chatLine struct {
	Type    string `json:"type"`
	Address string `json:"address"`
	Session string `json:"session"`
	MsgID   string `json:"msg_id"`
	Text    string `json:"text"`
}

// chatter is a `signoff chat --json` process fed through stdin.
type chatter struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	hello chatLine

	mu      sync.Mutex
	msgs    []chatLine
	claimed []bool
	stderr  strings.Builder
}

func startChatter(t *testing.T, name, devURL, dataDir string) *chatter {
	t.Helper()
	c := &chatter{t: t, name: name}
	c.cmd = exec.Command(signoffproc.Binary(t), "chat", "--dev-url", devURL, "--data-dir", dataDir, "--json", "--timeout", "1m")
	c.cmd.Dir = signoffproc.RepoRoot()
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill)
	hello := make(chan chatLine, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l chatLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			switch l.Type {
			case "hello":
				hello <- l
			case "message":
				c.mu.Lock()
				c.msgs = append(c.msgs, l)
				c.claimed = append(c.claimed, false)
				c.mu.Unlock()
			}
		}
	}()
	select {
	case c.hello = <-hello:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: signoff chat did not start:\n%s", name, c.errText())
	}
	return c
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *chatter) errText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

func (c *chatter) say(text string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, text+"\n"); err != nil {
		c.t.Fatalf("%s: write %q: %v", c.name, text, err)
	}
}

// expect waits for a message matching pattern that no earlier expect claimed, claims it and
// returns its text and submatches. Messages may arrive in any order; each is matched once.
func (c *chatter) expect(pattern string, within time.Duration) []string {
	c.t.Helper()
	re := regexp.MustCompile(pattern)
	within = signoffproc.HangLimit(within)
	deadline := time.Now().Add(within)
	for {
		c.mu.Lock()
		for i, m := range c.msgs {
			if c.claimed[i] {
				continue
			}
			if sub := re.FindStringSubmatch(m.Text); sub != nil {
				c.claimed[i] = true
				c.mu.Unlock()
				return append([]string{m.Text}, sub[1:]...)
			}
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: no message matching %q within %s; got:\n%s", c.name, pattern, within, c.transcript())
		}
		time.Sleep(50 * time.Millisecond) // waiting for another process's messages
	}
}

func (c *chatter) transcript() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, m := range c.msgs {
		b.WriteString("---\n" + m.Text + "\n")
	}
	return b.String()
}

// kill ends the client by PID (closing stdin first lets it end by itself).
func (c *chatter) kill() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	c.cmd = nil
}

// TestChatConversationAgainstDev: help; a task quoted from the fixture and cancelled; W1
// quoted, a stranger's approval refused, approved, paid from chat, progress,
// satisfied, payment captured; W2 in the same conversation, refused three times with the
// overflow measured, authorization cancelled.
func TestChatConversationAgainstDev(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev and signoff chat as processes, builds the fixture app and drives Chromium")
	}
	root := signoffproc.RepoRoot()
	for path, task := range map[string]string{
		filepath.Join(root, ".cache", "finance-deps", "node_modules", "next"):     "go tool task fixture:setup",
		filepath.Join(root, ".cache", "pw-driver", "1.64.1", "package", "cli.js"): "go tool task browser:setup",
		filepath.Join(root, ".bin", "stripe-mock"):                                "go tool task stripe:setup",
	} {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("missing %s: run `%s`", path, task)
		}
	}
	runsDir := filepath.Join(root, "fixtures", "runs")
	w1, err := runs.Load(runsDir, "W1")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := runs.Load(runsDir, "W2")
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	port := signoffproc.FreePort(t)
	av := &agentverseStub{}
	avSrv := httptest.NewServer(av)
	defer avSrv.Close()
	const avKey = "av-e2e-key-not-a-real-secret"
	dev := signoffproc.Start(t, []string{"AGENTVERSE_API_KEY=" + avKey}, "dev", "--data-dir", dataDir, "--temporal-port", port, "--ui-port", "0",
		"--loopback", "127.0.0.1:0", "--public", "127.0.0.1:0", "--runs-dir", runsDir, "--agentverse-url", avSrv.URL)
	signoffproc.WaitOutput(t, dev, "Ctrl-C stops.", 2*time.Minute)
	out := dev.Output()
	agent := regexp.MustCompile(`Chat agent:\s+(agent1\w+)`).FindStringSubmatch(out)
	devURL := regexp.MustCompile(`signoff chat --dev-url (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(out)
	if agent == nil || devURL == nil || !strings.Contains(out, "Agentverse:       registering "+agent[1]+` as "Signoff" (mailbox, polled)`) {
		t.Fatalf("signoff dev does not announce the chat agent:\n%s", out)
	}
	// The Agentverse listing carries a README rendered from the running configuration.
	reg := av.waitFor(t, "POST /v2/agents")
	var listing struct {
		Address   string   `json:"address"`
		Protocols []string `json:"protocols"`
		Profile   struct {
			Readme string `json:"readme"`
		} `json:"profile"`
	}
	if err := json.Unmarshal(reg.body, &listing); err != nil || listing.Address != agent[1] || reg.auth != "Bearer "+avKey {
		t.Fatalf("registration %s (auth %q): %v", reg.body, reg.auth, err)
	}
	for _, want := range []string{"`" + agent[1] + "`", "innovationlab", "local Stripe test double", "AGENTVERSE_API_KEY", "STRIPE_SECRET_KEY"} {
		if !strings.Contains(listing.Profile.Readme, want) {
			t.Fatalf("README lacks %q:\n%s", want, listing.Profile.Readme)
		}
	}
	av.waitFor(t, "GET /v2/agents/"+agent[1]+"/mailbox")

	started := time.Now()
	alice := startChatter(t, "alice", devURL[1], filepath.Join(t.TempDir(), "alice"))
	alice.say("help")
	alice.expect(`approve <hash>: accept exactly that contract`, time.Minute)

	// A task: survey and quote from the finance fixture, then cancelled before approval.
	// The base check runs on the execute and verify queues before the quote is offered. It
	// runs with every CPU busy (a hog in this test, unless the suite keeps them busy already):
	// the quote is a workflow, answered at once and pushed when ready, so load can delay it
	// but not turn it into a failure (before, the chat handler's own time limit did).
	stopHog := busyHost(t)
	asked := time.Now()
	alice.say("make the Watchlist page work well on mobile")
	alice.expect(`^Surveying signoff-fixtures/finance and running the criteria on its base commit.*The quote follows here\.$`, time.Minute)
	t.Logf("task acknowledged with its first answer in %s on a busy host", time.Since(asked).Round(time.Millisecond))
	alice.expect(`^Survey of signoff-fixtures/finance @ d2f02615`, 8*time.Minute)
	task := alice.expect(`(?s)^Quoted contract (watchlist-[0-9a-f-]+) .*Base check \(on the execute and verify queues\): 1 criterion fails on the base commit.*4 already hold.*`+
		`This quote stands until \d{4}-\d\d-\d\d \d\d:\d\d UTC.*Contract hash: ([0-9a-f]{64})`, time.Minute)
	var quoted struct {
		QuoteExpiresAt time.Time `json:"quote_expires_at"`
		Timeline       []struct {
			Type string            `json:"type"`
			Data map[string]string `json:"data"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, "contract", "status", task[1], "--json", "--data-dir", dataDir, "--temporal-address", "127.0.0.1:"+port)), &quoted); err != nil {
		t.Fatal(err)
	}
	if len(quoted.Timeline) < 2 || quoted.Timeline[1].Type != contracts.EventBaseCheck || quoted.Timeline[1].Data["checked_on"] != "queues" ||
		quoted.Timeline[1].Data["failing_on_base"] == "" || quoted.QuoteExpiresAt.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("the workflow did not record the queue base check and the quote's expiry: %+v", quoted)
	}
	stopHog()
	t.Logf("task quoted %s after it was asked, on a busy host", time.Since(asked).Round(time.Second))
	alice.say("cancel")
	alice.expect(`^Cancel requested for `+task[1]+`\. Nothing is captured; no payment was authorized\.`, time.Minute)
	alice.expect(`^Contract `+task[1]+` is cancelled; no payment was authorized\.`, time.Minute)

	// W1: quote, a stranger's approval answered as for a hash nobody quoted (nothing about
	// alice's contract, not her address), the requester's taken.
	alice.say("run W1")
	q1 := alice.expect(`(?s)^Prepared run W1: .*Quoted contract `+w1.Contract.ContractID+`.*Proofs are signed with verifier key (sha256:[0-9a-f]{64}) and control key (sha256:[0-9a-f]{64}); compare them with .signoff keys. on the server or the agent README \((http://127\.0\.0\.1:\d+/chat/README\.md)\)\..*Contract hash: ([0-9a-f]{64})`, time.Minute)
	// The fingerprints are the server's own keys, and the README served on loopback names them.
	var keys struct {
		Verifier string `json:"verifier_fingerprint"`
		Control  string `json:"control_fingerprint"`
	}
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, "keys", "--json", "--data-dir", dataDir)), &keys); err != nil {
		t.Fatal(err)
	}
	if q1[1] != keys.Verifier || q1[2] != keys.Control {
		t.Fatalf("the quote names keys %s / %s, signoff keys %s / %s", q1[1], q1[2], keys.Verifier, keys.Control)
	}
	if readme := httpGet(t, q1[3]); !strings.Contains(readme, keys.Verifier) || !strings.Contains(readme, keys.Control) {
		t.Fatalf("the agent README at %s does not name both keys:\n%s", q1[3], readme)
	}
	w1Hash := q1[4]
	mallory := startChatter(t, "mallory", devURL[1], filepath.Join(t.TempDir(), "mallory"))
	mallory.say("approve " + w1Hash)
	mallory.expect(`^No quoted contract here has that hash\. Describe a change or say "run W1" to get a quote first\.$`, time.Minute)
	mallory.kill()

	alice.say("approve " + w1Hash)
	alice.expect(`^Approved `+w1.Contract.ContractID+` \(hash `+w1Hash[:12]+`\), recorded with your address and message [0-9a-f-]{36}\.`, time.Minute)
	alice.expect(`(?s)^Authorize 49\.00 USD to start .*: http://127\.0\.0\.1:\d+/checkout/.*reply "pay" to complete the test checkout`, time.Minute)
	alice.say("pay")
	alice.expect(`^Local checkout completed for `+w1.Contract.ContractID+`\. Payment authorized \(local Stripe test double: no money moves\)`, time.Minute)
	alice.expect(`^Attempt 1: executor committed [0-9a-f]{12}`, 5*time.Minute)
	alice.expect(`^Attempt 1: build passed; verifying in a real browser\.`, 5*time.Minute)
	alice.expect(`(?s)^`+w1.Contract.ContractID+`: satisfied on attempt 1 of 3 \(commit [0-9a-f]{12}\): 6 of 6 criteria passed\. Payment authorized \(local Stripe test double: no money moves\)\..*Every criterion passed on the delivered commit`, 5*time.Minute)
	alice.expect(`(?s)^Payment captured: the contract is satisfied\.\nDeliverable: file://.*#signoff/`+w1.Contract.ContractID+`\nProof: http://127\.0\.0\.1:\d+/proofs/`+w1.Contract.ContractID+`/`, 2*time.Minute)
	alice.say("status W1")
	// Merge eligibility is declared just after the capture, so it may not show yet.
	alice.expect(`(?s)^`+w1.Contract.ContractID+`: satisfied, payment captured(, merge eligible)?\n.*Payment: captured \(local Stripe test double: no money moves\)`, time.Minute)
	t.Logf("W1 through chat: %s", time.Since(started).Round(time.Second))

	// W2 in the same conversation: refused three times, authorization cancelled.
	started = time.Now()
	alice.say("run W2")
	q2 := alice.expect(`(?s)^Prepared run W2: .*Contract hash: ([0-9a-f]{64})`, time.Minute)
	alice.say("approve " + q2[1])
	alice.expect(`^Approved `+w2.Contract.ContractID+` `, time.Minute)
	alice.say("pay")
	alice.expect(`^Local checkout completed for `+w2.Contract.ContractID+`\.`, time.Minute)
	for attempt := 1; attempt <= 3; attempt++ {
		a := string(rune('0' + attempt))
		if attempt > 1 {
			alice.expect(`^Attempt `+a+`: executor committed [0-9a-f]{12}`, 5*time.Minute)
		}
		v := alice.expect(`(?s)^`+w2.Contract.ContractID+`: not satisfied on attempt `+a+` of 3 .*scrollWidth = 927, innerWidth = 390`, 5*time.Minute)
		next := "The failed criteria go back to the executor for attempt"
		if attempt == 3 {
			next = "The contract has reached its attempt limit: merge and payment stay blocked"
		}
		if !strings.Contains(v[0], next) {
			t.Fatalf("verdict %d does not say what happens next (%q):\n%s", attempt, next, v[0])
		}
	}
	alice.expect(`^Authorization cancelled: no payment was taken \(verdict not_satisfied\)\.`, 2*time.Minute)
	alice.say("status " + w2.Contract.ContractID)
	alice.expect(`(?s)^`+w2.Contract.ContractID+`: not satisfied, authorization cancelled \(nothing captured\)\n.*Payment: authorization cancelled, nothing captured`, time.Minute)
	t.Logf("W2 through chat: %s", time.Since(started).Round(time.Second))
	t.Logf("alice's transcript:\n%s", alice.transcript())

	// The chat's story is the workflow's: the CLI reads the same final states.
	conn := []string{"--data-dir", dataDir, "--temporal-address", "127.0.0.1:" + port}
	var st struct {
		State     string `json:"state"`
		Requester string `json:"requester"`
		Payment   struct {
			State string `json:"state"`
		} `json:"payment"`
	}
	for id, want := range map[string][2]string{w1.Contract.ContractID: {"merge_eligible", "captured"}, w2.Contract.ContractID: {"payment_cancelled", "canceled"}} {
		if err := json.Unmarshal([]byte(signoffproc.CLI(t, append([]string{"contract", "status", id, "--json"}, conn...)...)), &st); err != nil {
			t.Fatal(err)
		}
		if st.State != want[0] || st.Payment.State != want[1] || st.Requester != alice.hello.Address {
			t.Fatalf("%s: state %s payment %s requester %s, want %v requested by %s", id, st.State, st.Payment.State, st.Requester, want, alice.hello.Address)
		}
	}
	if strings.Contains(dev.Output(), avKey) {
		t.Fatal("signoff dev printed the Agentverse API key")
	}
	if os.Getenv(temporaltest.EnvRecordHistories) != "" {
		c := signoffproc.DialDev(t, dataDir, "127.0.0.1:"+port)
		// A task cancelled before approval (the index is told), and W1 quoted, approved and
		// satisfied from chat (a stranger's approval no longer reaches the workflow).
		temporaltest.RecordHistory(t, c, contractapi.WorkflowID(task[1]), "c2-chat-task-cancelled")
		temporaltest.RecordHistory(t, c, contractapi.WorkflowID(w1.Contract.ContractID), "c4-w1-chat-satisfied")
	}
}

// agentverseStub answers the Agentverse and Almanac routes a listing uses, and records them.
type agentverseStub struct {
	mu    sync.Mutex
	calls []stubCall
}

type stubCall struct {
	route, auth string
	body        []byte
}

func (a *agentverseStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	a.mu.Lock()
	a.calls = append(a.calls, stubCall{route: r.Method + " " + r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/mailbox") {
		_, _ = io.WriteString(w, "[]")
		return
	}
	_, _ = io.WriteString(w, "{}") // the agent is known; every write accepted
}

func (a *agentverseStub) waitFor(t *testing.T, route string) stubCall {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		a.mu.Lock()
		for _, c := range a.calls {
			if c.route == route {
				a.mu.Unlock()
				return c
			}
		}
		a.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // waiting for another process's request
	}
	t.Fatalf("the Agentverse stub never saw %s", route)
	return stubCall{}
}

// httpGet reads a loopback page the test was pointed to, and fails the test on anything but 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d, %v", url, resp.StatusCode, err)
	}
	return string(body)
}
