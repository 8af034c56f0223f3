// Package conversation is what Signoff says in chat: it turns chat messages into contract
// workflows and pushes their progress back. A task message starts a quote workflow (its
// DraftQuote and Say activities are methods here) that drafts a quoted contract and pushes it,
// "run W1" binds a prepared run, "approve <hash>" signals the approval (the workflow itself
// refuses anyone but the requester), "pay" completes the local checkout, "cancel", "retry",
// "abandon" and "status <id>" do what they say. It reaches workflows only through the
// Temporal client's start, signal and query calls, never by touching their state.
//
// Progress comes two ways: the workflow's notify activity (payment link, commits, build,
// verdicts, capture or cancelled authorization) calls Notify, and a per-contract watcher reads
// the status query for the steps the workflow does not announce (payment authorized, a repair
// attempt starting, a quote expiring).
package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// Temporal is the part of the Temporal client the conversation uses: the contract client's
// (start, signal, update, query), which also starts the quote workflows. client.Client
// implements it.
type Temporal = contractclient.Temporal

// Outbox sends a chat message outside a request (progress). *chatbridge.Bridge implements it.
type Outbox interface {
	SendMessage(ctx context.Context, to, session string, msg chatproto.ChatMessage) error
}

// Index reads the contract index, which outlives workflow history.
type Index interface {
	Get(contractID string) (capability.IndexEntry, bool, error)
}

// Repo is a repository a task message may name.
type Repo struct {
	// Slug is owner/name, as tasks name it and allowlists match it.
	Slug string
	// Path is a local git repository (work tree or bare) holding it.
	Path string
	// URL, when set, is what the contract records instead of the path.
	URL string
	// Prepare, when set, makes Path exist before it is read (materializes a fixture).
	Prepare func(ctx context.Context) error
}

// Config wires a Conversation.
type Config struct {
	Temporal Temporal // required
	// StateFile keeps the session-to-contract map across restarts; "" keeps it in memory.
	StateFile string
	// RunsDir holds the prepared runs ("run W1"); PrepareRun readies one before its workflow
	// starts (materializes its repository, arms its preview faults).
	RunsDir    string
	PrepareRun func(ctx context.Context, r *runs.Run) error
	// Repos are the repositories tasks may name; the first is the default.
	Repos []Repo
	// Author drafts contracts from tasks. Its Checker runs the base check; nil skips it (the
	// chat default: a task is quoted in seconds, and the quote says the check was skipped).
	Author *authoring.Author
	// Trust is what the workflow checks evidence against (the verify worker's key and digest).
	Trust func() (contractapi.Trust, error)
	// Checkout completes a contract's local checkout for "pay" (the local Stripe test
	// double's); nil when payments go to a real provider, whose checkout a person completes
	// in a browser.
	Checkout func(ctx context.Context, contractID string) error
	// PaymentLabel says where local payments go and that no money moves (default
	// "local checkout: no money moves").
	PaymentLabel string
	// Index answers status for contracts whose history is gone, and locates proofs.
	Index Index
	// ProofURL links a contract's proof page; nil links none.
	ProofURL func(contractID string) string
	// ExecutorNote, when set, is added to task quotes (e.g. that this process runs only the
	// prepared executor).
	ExecutorNote string
	// Keys names the keys every proof is signed with, printed in each quote so a requester
	// can compare them with the operator's `signoff keys` and the agent README (ReadmeURL).
	Keys KeyFingerprints
	// ReadmeURL is where the agent README, keys included, is served.
	ReadmeURL string
	// Timeouts go into every workflow this conversation starts.
	Timeouts contractapi.Timeouts
	// Poll is how often watchers read a contract's status (default 500 ms).
	Poll time.Duration
	// ConcurrentQuotes bounds the quotes drafted at once (default DefaultConcurrentQuotes);
	// later ones wait in line and their requesters are told their place.
	ConcurrentQuotes int
	// QuotesPerRequester bounds one requester's quotes in line (default
	// DefaultQuotesPerRequester).
	QuotesPerRequester int
	// ApprovalsPerContract bounds one sender's approve commands per contract (default
	// DefaultApprovalsPerContract); beyond it they are answered without reaching the workflow.
	ApprovalsPerContract int
	// ReplyWait bounds how long a command waits for the workflow: the approve update's
	// answer, a payment's confirmation (default 15 s).
	ReplyWait time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Conversation implements chatbridge.Conversation and capability.Notifier.
type Conversation struct {
	cfg       Config
	contracts *contractclient.Client
	log       *slog.Logger
	store     *store
	sent      *recent
	quotes    *quoteLine
	// approvals counts approve commands per sender and contract.
	approvals approvalCounts

	mu       sync.Mutex
	out      Outbox
	sessions map[string]*sync.Mutex
	watching map[string]context.CancelFunc

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var (
	_ chatbridge.Conversation = (*Conversation)(nil)
	_ capability.Notifier     = (*Conversation)(nil)
)

// New validates cfg. Call Attach with the bridge, then Resume to pick up watchers of
// contracts that were in progress before a restart.
func New(cfg Config) (*Conversation, error) {
	if cfg.Temporal == nil {
		return nil, errors.New("conversation: Temporal is required")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.ReplyWait <= 0 {
		cfg.ReplyWait = 15 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ConcurrentQuotes <= 0 {
		cfg.ConcurrentQuotes = DefaultConcurrentQuotes
	}
	if cfg.QuotesPerRequester <= 0 {
		cfg.QuotesPerRequester = DefaultQuotesPerRequester
	}
	if cfg.ApprovalsPerContract <= 0 {
		cfg.ApprovalsPerContract = DefaultApprovalsPerContract
	}
	if cfg.PaymentLabel == "" {
		cfg.PaymentLabel = "local checkout: no money moves"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Conversation{cfg: cfg, contracts: contractclient.New(cfg.Temporal), log: log, store: &store{path: cfg.StateFile, now: cfg.Now}, sent: newRecent(4096),
		quotes:   newQuoteLine(cfg.ConcurrentQuotes),
		sessions: map[string]*sync.Mutex{}, watching: map[string]context.CancelFunc{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Attach sets where pushed messages go (the bridge, which is built with this conversation).
func (c *Conversation) Attach(out Outbox) {
	c.mu.Lock()
	c.out = out
	c.mu.Unlock()
}

// Resume starts a watcher for every contract bound before and not yet ended.
func (c *Conversation) Resume() error {
	bs, err := c.store.active()
	if err != nil {
		return fmt.Errorf("conversation: read sessions: %w", err)
	}
	for _, b := range bs {
		c.watch(b)
	}
	return nil
}

// Close stops the watchers.
func (c *Conversation) Close() {
	c.cancel()
	c.wg.Wait()
}

func (c *Conversation) outbox() Outbox {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out
}

// sessionLock serialises one session's messages, so "approve" is handled before the "pay"
// sent right after it.
func (c *Conversation) sessionLock(key string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.sessions[key]
	if m == nil {
		m = &sync.Mutex{}
		c.sessions[key] = m
	}
	return m
}

// OnText implements chatbridge.Conversation.
func (c *Conversation) OnText(ctx context.Context, in chatbridge.Inbound) ([]string, error) {
	l := c.sessionLock(sessionKey(in.Sender, in.Session))
	l.Lock()
	defer l.Unlock()
	text := strings.TrimSpace(in.Text)
	if text == "" {
		if in.EndSession {
			return nil, nil
		}
		return []string{helpText(c.runNames(), c.repoSlugs())}, nil
	}
	cmd := parse(text)
	switch cmd.verb {
	case verbHelp:
		return []string{helpText(c.runNames(), c.repoSlugs())}, nil
	case verbRun:
		return c.run(ctx, in, cmd.args[0])
	case verbApprove:
		return c.approve(ctx, in, cmd.args)
	case verbPay:
		return c.pay(ctx, in)
	case verbCancel:
		return c.cancelContract(ctx, in, cmd.args)
	case verbRetry, verbAbandon:
		return c.operator(ctx, in, cmd.verb, cmd.args)
	case verbStatus:
		return c.status(ctx, in, cmd.args)
	case verbList:
		return []string{c.list(in)}, nil
	case verbTask:
		return c.task(ctx, in, text)
	}
	return []string{"I did not understand that. Describe a change to a page (e.g. \"make the Watchlist page work well on mobile\"), say \"run W1\" for a prepared run, or \"help\"."}, nil
}

// Command words.
const (
	verbHelp    = "help"
	verbRun     = "run"
	verbApprove = "approve"
	verbPay     = "pay"
	verbCancel  = "cancel"
	verbRetry   = "retry"
	verbAbandon = "abandon"
	verbStatus  = "status"
	verbList    = "list"
	verbTask    = "task"
	verbUnknown = "unknown"
)

type command struct {
	verb string
	args []string
}

var (
	runNameRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,7}$`)
	hashRe       = regexp.MustCompile(`^[0-9a-f]{64}$`)
	contractIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
)

// parse reads a command; anything of three or more words that is not one is a task.
func parse(text string) command {
	words := strings.Fields(text)
	for len(words) > 1 && fillers[strings.ToLower(strings.TrimRight(words[0], ".,!?:;"))] {
		words = words[1:] // "please status W1"
	}
	first := strings.ToLower(strings.TrimRight(words[0], ".,!?:;"))
	args := commandArgs(words[1:])
	short := len(words) <= 3
	switch {
	case first == "help" || first == "?" || first == "hi" || first == "hello" || first == "hey" || first == "commands" || first == "/help":
		if len(words) <= 2 {
			return command{verb: verbHelp}
		}
	case first == "run" && len(args) == 1 && runNameRe.MatchString(args[0]):
		return command{verb: verbRun, args: args}
	case first == "approve" && len(args) >= 1 && len(args) <= 2:
		return command{verb: verbApprove, args: args}
	case (first == "pay" || first == "authorize" || first == "authorise") && len(words) <= 2:
		return command{verb: verbPay}
	case first == "cancel" && short:
		return command{verb: verbCancel, args: args}
	case first == "retry" && short:
		return command{verb: verbRetry, args: args}
	case first == "abandon" && short:
		return command{verb: verbAbandon, args: args}
	case first == "status" && len(args) <= 1:
		return command{verb: verbStatus, args: args}
	case (first == "list" || first == "runs") && len(args) == 0:
		return command{verb: verbList}
	}
	if len(words) >= 3 {
		return command{verb: verbTask}
	}
	return command{verb: verbUnknown}
}

// fillers are words a command may carry that change nothing ("status W1 please").
var fillers = map[string]bool{"please": true, "pls": true, "plz": true, "thanks": true, "thx": true, "now": true}

// commandArgs tidies a command's arguments: trailing punctuation goes ("Status w1."), and
// so do polite fillers, wherever they are.
func commandArgs(words []string) []string {
	out := []string{}
	for _, w := range words {
		w = strings.TrimRight(w, ".,!?:;")
		if w == "" || fillers[strings.ToLower(w)] {
			continue
		}
		out = append(out, w)
	}
	return out
}

func (c *Conversation) runNames() []string {
	if c.cfg.RunsDir == "" {
		return nil
	}
	return runs.List(c.cfg.RunsDir)
}

func (c *Conversation) repoSlugs() []string {
	var out []string
	for _, r := range c.cfg.Repos {
		out = append(out, r.Slug)
	}
	return out
}

func userErr(format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = shown(s)
		}
	}
	return &chatbridge.UserError{Msg: fmt.Sprintf(format, args...)}
}

// maxShown bounds what a reply repeats of the sender's own words.
const maxShown = 120 // above the longest contract id (100)

// shown is s as a reply repeats it: cut at maxShown characters, saying how much was left out.
func shown(s string) string { return chatproto.Shorten(s, maxShown) }

// channel is what the workflow carries as the contract's channel: the chat session, so a
// notice finds its conversation even without the session file.
func channel(session string) string { return channelPrefix + session }

const channelPrefix = "chat:"

func sessionOf(ch string) (string, bool) {
	s, ok := strings.CutPrefix(ch, channelPrefix)
	return s, ok && s != ""
}

// queryStatus reads a contract's status through the status query.
func (c *Conversation) queryStatus(ctx context.Context, contractID string) (contractapi.Status, error) {
	return c.contracts.Status(ctx, contractID)
}

// KeyFingerprints are the sha256 fingerprints of the verifier and control public keys.
type KeyFingerprints struct{ Verifier, Control string }

// errNoSuchContract stands for another requester's contract, so it is answered as one the
// server does not know.
var errNoSuchContract = serviceerror.NewNotFound("no such contract")

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}
