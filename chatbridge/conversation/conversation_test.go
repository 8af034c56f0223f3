package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/conversation"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

func runsDir() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(f), "..", "..", "fixtures", "runs")
}

type env struct {
	conv     *conversation.Conversation
	cfg      conversation.Config
	tmp      *fakeTemporal
	out      *outbox
	payments *fakePayments
	index    *index.Index
	dir      string
}

const proofBase = "http://127.0.0.1:8480/proofs/"

// The keys and README every quote names.
const (
	testVerifierFP = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	testControlFP  = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	testReadme     = "http://127.0.0.1:1/chat/README.md"
)

func newEnv(t *testing.T, withRepo bool) *env {
	t.Helper()
	dir := t.TempDir()
	p := &fakePayments{}
	e := &env{tmp: newFakeTemporal(p), out: &outbox{}, payments: p, index: index.Open(filepath.Join(dir, "index.json")), dir: dir}
	w1, err := runs.Load(runsDir(), "W1")
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = conversation.Config{
		Temporal: e.tmp, StateFile: filepath.Join(dir, "chat", "sessions.json"), RunsDir: runsDir(),
		Trust: func() (contractapi.Trust, error) {
			return contractapi.Trust{VerifierPublicKey: make([]byte, 32), VerifierDigest: w1.Contract.Verifier.Digest}, nil
		},
		Checkout: func(ctx context.Context, id string) error { return e.checkout(ctx, id) }, PaymentLabel: localstripe.Label,
		Index: e.index, ProofURL: func(id string) string { return proofBase + id + "/" },
		Poll: 10 * time.Millisecond, ReplyWait: 3 * time.Second,
		Keys: conversation.KeyFingerprints{Verifier: testVerifierFP, Control: testControlFP}, ReadmeURL: testReadme,
	}
	if withRepo {
		repo := filepath.Join(dir, "finance")
		if _, err := fixturerepo.MaterializeFS(finance.Files, repo); err != nil {
			t.Fatal(err)
		}
		e.cfg.Repos = []conversation.Repo{{Slug: "signoff-fixtures/finance", Path: repo, URL: "fixture://finance"}}
		e.cfg.Author = &authoring.Author{Admission: &authoring.Admission{Allow: []string{"signoff-fixtures/*"}}, Verifier: w1.Contract.Verifier}
		e.cfg.ExecutorNote = "this process runs the prepared executor"
	}
	e.tmp.quote = func(req contractapi.QuoteRequest) contractapi.QuoteReply {
		r, err := e.conv.DraftQuote(context.Background(), req)
		if err != nil {
			r = contractapi.QuoteReply{Outcome: contractapi.QuoteFailed}
		}
		id := contractapi.QuoteWorkflowID(req.Requester, req.Session, req.MsgID)
		if err := e.conv.Say(context.Background(), contractapi.ChatSay{To: req.Requester, Session: req.Session, Key: id + "/reply", Texts: r.Messages,
			Failed: r.Outcome == contractapi.QuoteFailed}); err != nil {
			t.Errorf("say the quote: %v", err)
		}
		return r
	}
	e.start(t)
	return e
}

// checkout is "pay" on the local Stripe test double: the payer completes the checkout, and
// the double's webhook tells the workflow, which confirms it with the provider.
func (e *env) checkout(ctx context.Context, contractID string) error {
	ps, err := e.payments.pay(contractID)
	if err != nil {
		return err
	}
	return contractclient.NewSignals(e.tmp).PaymentAuthorized(ctx, contractID,
		contractapi.PaymentAuthorized{SessionID: ps.CheckoutSessionID, PaymentIntentID: ps.PaymentIntentID, Source: "stripe-webhook"})
}

// task says a task message and returns the immediate answer and the quote pushed after it.
func (e *env) task(t *testing.T, p person, text string) (string, string) {
	t.Helper()
	before := len(e.tmp.quoted)
	ack, _ := e.say(t, p, text)
	if len(e.tmp.quoted) == before {
		return ack, ""
	}
	return ack, strings.Join(e.tmp.quoted[len(e.tmp.quoted)-1].Messages, "\n---\n")
}

func (e *env) start(t *testing.T) {
	t.Helper()
	c, err := conversation.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Attach(e.out)
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	e.conv = c
}

type person struct {
	addr, session string
}

func newPerson(t *testing.T, session string) person {
	t.Helper()
	id, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return person{id.Address(), session}
}

var msgSeq int

// say sends text as p and returns the replies joined, with a UserError's text as the reply.
func (e *env) say(t *testing.T, p person, text string) (string, string) {
	t.Helper()
	msgSeq++
	msgID := chatbridge.MessageID("test-msg-" + time.Now().String() + text + string(rune('a'+msgSeq%26)))
	replies, err := e.conv.OnText(context.Background(), chatbridge.Inbound{Sender: p.addr, Session: p.session, MsgID: msgID, Text: text})
	var ue *chatbridge.UserError
	switch {
	case errors.As(err, &ue):
		return ue.Msg, msgID
	case err != nil:
		t.Fatalf("%q: %v", text, err)
	}
	return strings.Join(replies, "\n---\n"), msgID
}

func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("reply lacks %q:\n%s", w, got)
		}
	}
}

const (
	sessionA = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	sessionB = "7a2d3b4c-5e6f-4a71-9b8c-0d1e2f3a4b5c"
	sessionC = "8b3e4c5d-6f7a-4b82-8c9d-1e2f3a4b5c6d"
)

// The prepared-run conversation: quote, refusals by the workflow's rules, approval with the
// sender and message id, the local checkout, progress, verdict from the bundle, restart.
func TestPreparedRunConversation(t *testing.T) {
	e := newEnv(t, false)
	alice, mallory := newPerson(t, sessionA), newPerson(t, sessionB)
	w1, _ := runs.Load(runsDir(), "W1")
	q, _ := contracts.NewQuote(w1.Contract, alice.addr)
	id := w1.Contract.ContractID

	reply, _ := e.say(t, alice, "run w1")
	mustContain(t, reply, "Prepared run W1", "Quoted contract "+id, "Criteria (", "49.00 USD", "Contract hash: "+q.Hash, "approve "+q.Hash,
		"Proofs are signed with verifier key "+testVerifierFP+" and control key "+testControlFP+"; compare them with `signoff keys` on the server or the agent README ("+testReadme+").")
	in := e.tmp.input(id)
	if in.Quote.Requester != alice.addr || in.Channel != "chat:"+sessionA || in.Quote.Hash != q.Hash {
		t.Fatalf("workflow input: requester %q channel %q hash %s", in.Quote.Requester, in.Channel, in.Quote.Hash)
	}
	if s := e.tmp.starts[0]; !s.WorkflowExecutionErrorWhenAlreadyStarted || s.ID != contractapi.WorkflowID(id) || s.TaskQueue != contractapi.ControlQueue {
		t.Fatalf("start options %+v", s)
	}
	// Asking again re-shows the same quote; another requester cannot take it over.
	reply, _ = e.say(t, alice, "run W1")
	mustContain(t, reply, "already quoted to you", q.Hash)
	reply, _ = e.say(t, mallory, "run W1")
	mustContain(t, reply, "in progress for another requester")

	reply, _ = e.say(t, alice, "pay")
	mustContain(t, reply, "not approved yet")

	// Someone else approving the exact hash learns nothing: the answer to a hash nobody quoted.
	reply, _ = e.say(t, mallory, "approve "+q.Hash)
	mustContain(t, reply, "No quoted contract here has that hash")
	wrong := strings.Repeat("ab", 32)
	reply, _ = e.say(t, alice, "approve "+wrong)
	mustContain(t, reply, "Approval refused by the workflow", "hash "+wrong[:12])
	reply, _ = e.say(t, alice, "approve abc123")
	mustContain(t, reply, "full 64-character")

	reply, approveMsg := e.say(t, alice, "approve "+q.Hash)
	mustContain(t, reply, "Approved "+id, approveMsg, "authorize 49.00 USD")
	sigs := e.tmp.signalsNamed(contractapi.UpdateApprove)
	last := sigs[len(sigs)-1].Arg.(contractapi.Approve)
	if last.Approver != alice.addr || last.MessageID != approveMsg || last.Channel != "chat:"+sessionA || last.Hash != q.Hash {
		t.Fatalf("approval signal %+v", last)
	}

	// The workflow's payment notice reaches the session, once, with the local checkout hint.
	notice := capability.Notice{ContractID: id, Requester: alice.addr, Channel: "chat:" + sessionA, Kind: "payment",
		Text: "Authorize 29.00 USD to start (captured only if the contract is satisfied): http://127.0.0.1:8480/checkout/x"}
	for range 2 {
		if err := e.conv.Notify(context.Background(), notice); err != nil {
			t.Fatal(err)
		}
	}
	m := e.out.waitPushed(t, "reply \"pay\"")
	if m.To != alice.addr || m.Session != sessionA {
		t.Fatalf("payment notice went to %s/%s", m.To, m.Session)
	}
	if n := countContaining(e.out.all(), "Authorize 29.00 USD"); n != 1 {
		t.Fatalf("payment notice pushed %d times", n)
	}
	// A notice for a contract started elsewhere (the CLI) is not chat's business.
	if err := e.conv.Notify(context.Background(), capability.Notice{ContractID: "x", Requester: "alice", Channel: "cli", Kind: "verdict", Text: "cli only"}); err != nil {
		t.Fatal(err)
	}

	reply, _ = e.say(t, mallory, "cancel "+id)
	mustContain(t, reply, "No contract \""+id+"\" is running here")
	reply, _ = e.say(t, mallory, "pay")
	mustContain(t, reply, "No contract in this conversation")

	reply, _ = e.say(t, alice, "pay")
	mustContain(t, reply, "Local checkout completed for "+id, "Payment authorized ("+localstripe.Label+"): nothing is captured unless",
		"Attempt 1 of 3 starts: cloning signoff-fixtures/finance")
	if ps := e.payments.all(); len(ps) != 1 || ps[0].ContractID != id || ps[0].State != capability.PaymentAuthorized {
		t.Fatalf("payments %+v", ps)
	}

	reply, _ = e.say(t, alice, "status W1")
	mustContain(t, reply, id+": payment authorized", "Payment: authorized, not captured ("+localstripe.Label+")")
	reply, _ = e.say(t, mallory, "status W1")
	mustContain(t, reply, "has not been started here")
	reply, _ = e.say(t, alice, "status w2")
	mustContain(t, reply, "Prepared run W2", "has not been started", "run W2")
	reply, _ = e.say(t, alice, "status no-such-contract")
	mustContain(t, reply, "No contract \"no-such-contract\"")

	// The verdict comes from the signed bundle the index points at: criterion, observed values,
	// what happens next.
	proof := writeBundle(t, e.dir, w1.Contract, q.Hash, 1)
	if err := e.index.Put(capability.IndexEntry{ContractID: id, ContractHash: q.Hash, ProofDir: proof, State: contracts.StateNotSatisfied}); err != nil {
		t.Fatal(err)
	}
	e.tmp.set(id, func(st *contractapi.Status) { st.State, st.Attempt = contracts.StateNotSatisfied, 1 })
	if err := e.conv.Notify(context.Background(), capability.Notice{ContractID: id, Requester: alice.addr, Channel: "chat:" + sessionA,
		Kind: "verdict", Text: "Attempt 1: not satisfied."}); err != nil {
		t.Fatal(err)
	}
	v := e.out.waitPushed(t, "scrollWidth = 927, innerWidth = 390")
	mustContain(t, v.Text, id+": not satisfied on attempt 1 of 3", "attempt 2 under the same contract", "Proof: "+proofBase+id+"/",
		"Also: criterion 4")
	e.tmp.set(id, func(st *contractapi.Status) {
		st.State, st.Attempt, st.Phase = contracts.StateRepairing, 2, "executor repairing"
	})
	e.tmp.waitQueries(t, 5)
	// The reply to "pay" announced the authorization; the watcher did not repeat it.
	if n := countContaining(e.out.all(), "nothing is captured unless"); n != 0 {
		t.Fatalf("the watcher repeated the authorization %d times", n)
	}

	// A restarted process keeps the session's contract and does not repeat what was said.
	before := len(e.out.all())
	e.conv.Close()
	e.start(t)
	reply, _ = e.say(t, alice, "status")
	mustContain(t, reply, id+": executor repairing, attempt 2 of 3")
	e.tmp.waitQueries(t, 5) // the resumed watcher has read the status several times
	if n := countContaining(e.out.all()[before:], "nothing is captured unless"); n != 0 {
		t.Fatalf("a restart repeated a progress message %d times", n)
	}
	reply, _ = e.say(t, alice, "cancel")
	mustContain(t, reply, "Cancel requested for "+id, "authorization will be cancelled")
	c := e.tmp.signalsNamed(contractapi.SignalCancel)
	if len(c) != 1 || c[0].Arg.(contractapi.Cancel).By != alice.addr {
		t.Fatalf("cancel signals %+v", c)
	}
}

// A task becomes a surveyed, quoted contract per requester; bad repositories and goals are
// refused with reasons and start nothing.
func TestTaskConversation(t *testing.T) {
	e := newEnv(t, true)
	alice, bob := newPerson(t, sessionA), newPerson(t, sessionC)
	ack, reply := e.task(t, alice, "Make the Watchlist page work well on mobile in signoff-fixtures/finance")
	mustContain(t, ack, "Surveying signoff-fixtures/finance", "The quote follows here.")
	mustContain(t, reply, "Survey of signoff-fixtures/finance @", "/watchlist", "Quoted contract watchlist-", "Goal: Make the Watchlist page work well on mobile\n",
		"Base check: skipped (this Signoff quotes chat tasks without it)", "This quote stands until ", "Note: this process runs the prepared executor", "Contract hash: ")
	// The quote reached the requester as pushed messages in the session.
	e.out.waitPushed(t, "Quoted contract watchlist-")
	starts := e.tmp.contractStarts()
	if len(starts) != 1 {
		t.Fatalf("%d workflows started", len(starts))
	}
	id := strings.TrimPrefix(starts[0].ID, "contract-")
	in := e.tmp.input(id)
	if h, _ := contracts.Hash(in.Quote.Contract); h != in.Quote.Hash || in.Quote.Requester != alice.addr || in.Quote.Contract.Repo.URL != "fixture://finance" {
		t.Fatalf("quote %+v", in.Quote)
	}
	mustContain(t, reply, "approve "+in.Quote.Hash)

	_, reply = e.task(t, bob, "make the Watchlist page work well on mobile")
	if s := e.tmp.contractStarts(); len(s) != 2 || s[1].ID == s[0].ID {
		t.Fatalf("the same words from another requester must give another contract: %+v", s)
	}
	mustContain(t, reply, "Quoted contract watchlist-")
	_, reply = e.task(t, alice, "Make the Watchlist page work well on mobile")
	mustContain(t, reply, "already quoted to you", in.Quote.Hash)

	reply, _ = e.say(t, alice, "make the Watchlist page work well on mobile repo acme/shop")
	mustContain(t, reply, "acme/shop is not among the repositories", "signoff-fixtures/finance")
	_, reply = e.task(t, alice, "make everything better and nicer")
	mustContain(t, reply, "I cannot turn that into a contract")
	if n := len(e.tmp.contractStarts()); n != 3 {
		t.Fatalf("refused tasks started workflows: %d starts", n)
	}
	reply, _ = e.say(t, alice, "thanks")
	mustContain(t, reply, "did not understand")
	reply, _ = e.say(t, alice, "help")
	mustContain(t, reply, "approve <hash>", "run W1", "signoff-fixtures/finance")
}

// A sender's approvals per contract are capped, the requester's too; a stranger's never reach
// the workflow.
func TestApprovalsAreBounded(t *testing.T) {
	e := newEnv(t, false)
	alice, mallory := newPerson(t, sessionA), newPerson(t, sessionB)
	reply, _ := e.say(t, alice, "run W1")
	hash := regexpHash(t, reply)
	for range conversation.DefaultApprovalsPerContract + 2 {
		reply, _ = e.say(t, mallory, "approve "+hash)
		mustContain(t, reply, "No quoted contract here has that hash")
	}
	if n := len(e.tmp.signalsNamed(contractapi.UpdateApprove)); n != 0 {
		t.Fatalf("a stranger's approvals reached the workflow %d times", n)
	}
	wrong := strings.Repeat("b", 64)
	for range conversation.DefaultApprovalsPerContract {
		e.say(t, alice, "approve "+wrong)
	}
	reply, _ = e.say(t, alice, "approve "+hash)
	mustContain(t, reply, "no more are taken from you")
	if n := len(e.tmp.signalsNamed(contractapi.UpdateApprove)); n != conversation.DefaultApprovalsPerContract {
		t.Fatalf("approve signals: %d", n)
	}
}

// TestStrangersLearnNothing: every command a stranger sends about a requester's contract gets,
// byte for byte, the answer the same command gets for a contract nobody started, and none of
// them reaches the workflow.
func TestStrangersLearnNothing(t *testing.T) {
	e := newEnv(t, false)
	alice, mallory := newPerson(t, sessionA), newPerson(t, sessionB)
	reply, _ := e.say(t, alice, "run W1")
	hash := regexpHash(t, reply)
	id := e.tmp.contractStarts()[0].ID[len(contractapi.WorkflowID("")):]
	reply, _ = e.say(t, alice, "approve "+hash)
	mustContain(t, reply, "Approved "+id)
	before := len(e.tmp.signals)
	const ghost = "ghost-contract-0000"
	ghostHash := strings.Repeat("c", 64)
	for _, cmd := range []string{"status %s", "approve %s %h", "approve %h", "cancel %s", "retry %s", "abandon %s", "pay", "list"} {
		mine := strings.NewReplacer("%s", id, "%h", hash).Replace(cmd)
		none := strings.NewReplacer("%s", ghost, "%h", ghostHash).Replace(cmd)
		got, _ := e.say(t, mallory, mine)
		want, _ := e.say(t, mallory, none)
		if strings.ReplaceAll(got, id, ghost) != want {
			t.Errorf("%q: a stranger reads\n%s\nwhere an unknown contract gives\n%s", mine, got, want)
		}
		for _, secret := range []string{alice.addr, hash[:12], "Watchlist", "49.00", "approved"} {
			if strings.Contains(got, secret) {
				t.Errorf("%q: the stranger's answer holds %q: %s", mine, secret, got)
			}
		}
	}
	if n := len(e.tmp.signals); n != before {
		t.Errorf("a stranger's commands reached the workflow: %d signals/updates", n-before)
	}
	// The requester still reads their own.
	reply, _ = e.say(t, alice, "status "+id)
	mustContain(t, reply, id, hash[:12])
}

func regexpHash(t *testing.T, s string) string {
	t.Helper()
	i := strings.Index(s, "Contract hash: ")
	if i < 0 || len(s) < i+15+64 {
		t.Fatalf("no contract hash in %q", s)
	}
	return s[i+15 : i+15+64]
}

// The same task message handed over twice (a resend, a restart) starts one quote.
// TestHugeArgumentsAreNotEchoed: a 150 KB argument gets a reply that names a bounded piece of it.
func TestHugeArgumentsAreNotEchoed(t *testing.T) {
	e := newEnv(t, false)
	alice := newPerson(t, sessionA)
	huge := strings.Repeat("x", 150<<10)
	for _, cmd := range []string{"status ", "cancel ", "run ", "approve "} {
		reply, _ := e.say(t, alice, cmd+huge)
		if len(reply) > 1000 || !strings.Contains(reply, "more characters") && !strings.Contains(reply, "64-character") && !strings.Contains(reply, "did not understand") {
			t.Errorf("%q + 150 KB: a reply of %d bytes: %.300s", cmd, len(reply), reply)
		}
	}
}

func TestTaskMessageQuotedOnce(t *testing.T) {
	e := newEnv(t, true)
	alice := newPerson(t, sessionA)
	in := chatbridge.Inbound{Sender: alice.addr, Session: alice.session, MsgID: chatbridge.MessageID("once"), Text: "make the Watchlist page work well on mobile"}
	for i, want := range []string{"The quote follows here.", "already being quoted"} {
		replies, err := e.conv.OnText(context.Background(), in)
		if err != nil || len(replies) != 1 || !strings.Contains(replies[0], want) {
			t.Fatalf("delivery %d: %q %v", i+1, replies, err)
		}
	}
	if n := len(e.tmp.quoted); n != 1 {
		t.Fatalf("%d quotes drafted for one message", n)
	}
}

// Pushes before Attach fail loudly instead of vanishing.
func TestNotifyWithoutOutbox(t *testing.T) {
	c, err := conversation.New(conversation.Config{Temporal: newFakeTemporal(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := newPerson(t, sessionA).addr
	err = c.Notify(context.Background(), capability.Notice{ContractID: "c1", Requester: addr, Channel: "chat:" + sessionA, Kind: "build", Text: "x"})
	if !errors.Is(err, conversation.ErrNotAttached) {
		t.Fatalf("err = %v", err)
	}
}

// Nothing a person reads in chat may talk about money in words other than authorize,
// capture and cancel authorization.
func TestWordingAvoidsEscrowAndRefund(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		low := strings.ToLower(string(b))
		for _, bad := range []string{"escrow", "refund"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s says %q", f, bad)
			}
		}
	}
}

func countContaining(ms []pushed, s string) int {
	n := 0
	for _, m := range ms {
		if strings.Contains(m.Text, s) {
			n++
		}
	}
	return n
}

// writeBundle writes a not-satisfied attempt as the proof store lays it out.
func writeBundle(t *testing.T, root string, c contracts.Contract, hash string, attempt int) string {
	t.Helper()
	dir := filepath.Join(root, "proofs", c.ContractID, "attempt-1", "try-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := contracts.Bundle{SchemaVersion: contracts.BundleSchemaVersion, ContractID: c.ContractID, ContractHash: hash, Goal: c.Goal,
		Attempt: attempt, Try: 1, ImplementationSHA: strings.Repeat("c", 40), Verdict: contracts.NotSatisfied,
		Reasons: []contracts.Reason{
			{Rule: 6, Code: "criterion_failed", Criterion: "no-horizontal-overflow-mobile", Message: "criterion 3 (no-horizontal-overflow-mobile) at 390x844: scrollWidth = 927, innerWidth = 390 (want scrollWidth <= innerWidth)"},
			{Rule: 6, Code: "criterion_failed", Criterion: "cards-mobile", Message: "criterion 4 (cards-mobile) at 390x844: matching elements: observed 0, expected >= 4"},
		},
		Payment: contracts.PaymentRef{Provider: payment.ProviderLocal, State: capability.PaymentAuthorized, Local: true}, Artifacts: []contracts.Artifact{}}
	for name, v := range map[string]any{"bundle.json": b, "contract.json": c} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// busyOnce is a base check the host was too busy for the first time (every criterion timed
// out), then measured: the goal's criteria fail on the base, the guards pass.
type busyOnce struct {
	mu    sync.Mutex
	calls int
	// failing are the repository checks the base fails once measured.
	failing []contracts.PreexistingFailure
}

func (b *busyOnce) CheckBase(_ context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	b.mu.Lock()
	b.calls++
	first := b.calls == 1
	b.mu.Unlock()
	r := &authoring.BaseReport{CommitSHA: c.Repo.BaseCommitSHA, BuiltSHA: c.Repo.BaseCommitSHA, RuntimeSHA: c.Repo.BaseCommitSHA}
	if !first {
		r.FailingChecks = b.failing
	}
	for _, cr := range c.Criteria {
		res := authoring.BaseResult{CriterionID: cr.ID, Outcome: authoring.OutcomePass}
		switch {
		case first:
			res.Outcome, res.Error = authoring.OutcomeError, "timeout: the page did not settle"
		case cr.ID == "mobile-cards" || cr.ID == "mobile-no-overflow":
			res.Outcome, res.Failures = authoring.OutcomeFail, []string{"at 390x844: scrollWidth = 927, innerWidth = 390"}
		}
		r.Results = append(r.Results, res)
	}
	return r, nil
}

// A base check the busy host could not measure runs again; the requester hears so when the
// rerun is scheduled, not only at the end, and then gets the quote.
func TestBaseCheckRerunIsTold(t *testing.T) {
	e := newEnv(t, true)
	checker := &busyOnce{failing: []contracts.PreexistingFailure{{Step: "lint", Errors: 2, Cause: "✖ 2 problems (2 errors, 0 warnings)"}}}
	e.cfg.Author.Checker = checker
	e.cfg.Author.BusyRetries = []time.Duration{time.Millisecond}
	alice := newPerson(t, sessionA)
	_, reply := e.task(t, alice, "Make the Watchlist page work well on mobile in signoff-fixtures/finance")
	told := e.out.waitPushed(t, "Still checking the base commit")
	if !strings.Contains(told.Text, "run 2 of 2") || told.To != alice.addr {
		t.Errorf("rerun notice %+v", told)
	}
	// The quote names the lint the base already fails, recorded rather than refused.
	mustContain(t, reply, "Quoted contract watchlist-", "Already failing: lint fails on the base commit (2 errors): ✖ 2 problems (2 errors, 0 warnings). Not part of the goal")
	checker.mu.Lock()
	defer checker.mu.Unlock()
	if checker.calls != 2 {
		t.Errorf("base checked %d times, want 2", checker.calls)
	}
}

// A quote whose drafting kept failing is told in the chat's own words: what went wrong
// inside stays inside, and the requester learns that nothing started and to try again.
func TestFailedQuoteIsToldPlainly(t *testing.T) {
	e := newEnv(t, false)
	alice := newPerson(t, sessionA)
	if err := e.conv.Say(context.Background(), contractapi.ChatSay{To: alice.addr, Session: alice.session, Key: "quote-x/reply", Failed: true}); err != nil {
		t.Fatal(err)
	}
	got := e.out.all()
	if len(got) != 1 || !strings.Contains(got[0].Text, "could not prepare a quote") || !strings.Contains(got[0].Text, "nothing is owed") {
		t.Fatalf("pushed %+v", got)
	}
}
