package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/agentverse"
	"github.com/signoff/signoff/chatbridge/almanac"
	"github.com/signoff/signoff/chatbridge/chatclient"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/conversation"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/transport"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
)

// ChatOptions configure the chat bridge: Signoff as an Agent Chat Protocol agent on the public
// listener's /submit, with a local Almanac on the loopback listener so `signoff chat` and the
// bridge find each other offline. It runs only in a process that works the control queue
// (the agent seed is a control-queue secret).
type ChatOptions struct {
	// Disabled turns the bridge off.
	Disabled bool
	// Seed derives the agent key (the uAgents way). Empty: a seed generated once and kept,
	// 0600, in the keys folder of the data dir (AgentSeedFile).
	Seed string
	// Name is the agent's listing name (default "Signoff").
	Name string
	// AlmanacAPI, when set, also resolves peers through that Almanac API (almanac.DefaultAPI
	// for agents registered on Agentverse); the local registry is always asked first.
	AlmanacAPI string
	// AgentverseAPIKey registers the agent on Agentverse (AGENTVERSE_API_KEY); empty: local
	// almanac only. AgentverseURL overrides https://agentverse.ai.
	AgentverseAPIKey, AgentverseURL string
	// AgentverseTeam, when set, is sent as the x-team of Agentverse calls (AGENTVERSE_TEAM).
	AgentverseTeam string
	// Endpoint is the public URL Agentverse forwards envelopes to (this listener's /submit as
	// the world reaches it). Empty with Agentverse: the Agentverse mailbox, polled.
	Endpoint string
	// BaseCheck runs a task's criteria on its base commit through the execute and verify
	// queues before it is quoted (a build and a browser run); a contract the base already
	// satisfies is not offered. Off, quotes come in seconds and each says the check was skipped.
	BaseCheck bool
	// ExecutorNote is added to task quotes (e.g. that this process runs the prepared
	// executor, which changes code only for prepared runs).
	ExecutorNote string
	// Faults receives a prepared run's preview faults when chat starts it (W5).
	Faults *runs.FaultPlan
	// Timeouts go into every contract started from chat.
	Timeouts contractapi.Timeouts
	// ConcurrentQuotes bounds the task quotes prepared at once (default
	// conversation.DefaultConcurrentQuotes).
	ConcurrentQuotes int
}

// AgentSeedFile holds the generated agent seed under the keys folder.
const AgentSeedFile = "agent.seed"

// Chat is the running bridge, as `signoff dev` reports it.
type Chat struct {
	Address string // the agent1... address
	// Endpoint is the bridge's submit URL on the public listener.
	Endpoint string
	// AlmanacURL is the local Almanac API root on the loopback listener (.../v1/almanac).
	AlmanacURL string
	// InfoURL answers {address, endpoint, almanac_url} for `signoff chat --dev-url`.
	InfoURL string
	// ReadmeURL serves the agent README on the loopback listener.
	ReadmeURL string
	// Agentverse says, in one line, whether and how the agent is listed on Agentverse.
	Agentverse   string
	Bridge       *chatbridge.Bridge
	Conversation *conversation.Conversation
	Registry     *almanac.Registry
}

// ReadmePath is the loopback route of the agent README (markdown): what Agentverse lists, with
// the fingerprints of the keys proofs are signed with, served with or without Agentverse.
const ReadmePath = "/chat/README.md"

// Chat is the stack's chat bridge; nil when it is off.
func (s *Stack) Chat() *Chat { return s.chat }

// notifierFor is what the control worker notifies: o.Notifier and, once mountChat has run,
// the chat conversation. The control worker is built before the bridge exists, so it gets
// this indirection.
func notifierFor(s *Stack, o Options) capability.Notifier {
	s.notices.next = o.Notifier
	return &s.notices
}

// notifyRouter forwards notices to the chat (when mounted) and to the configured notifier.
type notifyRouter struct {
	mu   sync.RWMutex
	chat capability.Notifier
	next capability.Notifier
}

func (r *notifyRouter) set(n capability.Notifier) {
	r.mu.Lock()
	r.chat = n
	r.mu.Unlock()
}

// Notify implements capability.Notifier.
func (r *notifyRouter) Notify(ctx context.Context, n capability.Notice) error {
	r.mu.RLock()
	chat := r.chat
	r.mu.RUnlock()
	var errs []error
	if chat != nil {
		errs = append(errs, chat.Notify(ctx, n))
	}
	if r.next != nil {
		errs = append(errs, r.next.Notify(ctx, n))
	}
	return errors.Join(errs...)
}

// mountChat puts the bridge on the public listener, the local Almanac and the bridge's
// description on the loopback one, and routes workflow notices to the conversation.
func mountChat(_ context.Context, s *Stack, o Options) error {
	if o.Chat.Disabled || !o.Control {
		return nil
	}
	log := slog.New(slog.NewTextHandler(orDiscard(o.Log), &slog.HandlerOptions{Level: slog.LevelInfo})).With("part", "chat")
	keys := s.Config.Layout().Keys
	seed := o.Chat.Seed
	if seed == "" {
		var err error
		if seed, err = signing.LoadOrCreateSeed(filepath.Join(keys, AgentSeedFile), 32); err != nil {
			return fmt.Errorf("agent seed: %w", err)
		}
	}
	id, err := identity.FromSeed(seed, 0)
	if err != nil {
		return fmt.Errorf("agent identity: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.closers = append(s.closers, cancel)

	registry := &almanac.Registry{Logger: log, File: filepath.Join(s.Config.DataDir, "chat", "almanac.json")}
	resolver := transport.FirstOf{registry}
	if o.Chat.AlmanacAPI != "" {
		resolver = append(resolver, &almanac.APIResolver{BaseURL: o.Chat.AlmanacAPI})
	}
	avBase := strings.TrimRight(o.Chat.AgentverseURL, "/")
	if avBase == "" {
		avBase = agentverse.DefaultBaseURL
	}
	if o.Chat.AgentverseAPIKey != "" && o.Chat.AlmanacAPI != avBase+agentverse.AlmanacPath {
		resolver = append(resolver, &almanac.APIResolver{BaseURL: avBase + agentverse.AlmanacPath})
	}

	readme := agentReadme(o, id.Address(), log)
	s.Loopback.Extra["GET "+ReadmePath] = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = io.WriteString(w, readme)
	})
	cc := conversationConfig(s, o, log)
	cc.ReadmeURL = s.LoopbackURL + ReadmePath
	conv, err := conversation.New(cc)
	if err != nil {
		return err
	}
	bridge, err := chatbridge.New(chatbridge.Config{Identity: id, Conversation: conv, Resolver: resolver, Logger: log,
		JournalFile: filepath.Join(s.Config.DataDir, "chat", "journal.jsonl")})
	if err != nil {
		conv.Close()
		return err
	}
	conv.Attach(bridge)
	s.notices.set(conv)
	s.closers = append(s.closers, func() {
		s.notices.set(nil)
		closeCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = bridge.Close(closeCtx)
		conv.Close()
	})
	if err := conv.Resume(); err != nil {
		log.Warn("chat watchers not resumed", "err", err)
	}
	// The chat's durable work (quotes) runs on its own queue, in this process: it needs the
	// conversation and the agent key. Stopped before the bridge closes (closers run in reverse).
	cw := worker.New(s.Client, contractapi.ChatQueue, workers.WorkerOptions())
	workers.RegisterChat(cw, conv)
	if err := cw.Start(); err != nil {
		return fmt.Errorf("start the %s worker: %w", contractapi.ChatQueue, err)
	}
	s.closers = append(s.closers, cw.Stop)
	// Messages accepted before a restart but not handled are handed over now.
	bridge.Resume()

	base := loopbackURL(s.PublicURL, log)
	if base == "" {
		base = s.PublicURL
	}
	endpoint := base + "/submit"
	s.PublicMux.Handle("/submit", bridge)
	s.Loopback.Extra["/v1/almanac/"] = registry
	info := chatclient.BridgeInfo{Address: id.Address(), Endpoint: endpoint, AlmanacURL: s.LoopbackURL + "/v1/almanac", Protocol: chatproto.ProtocolDigest}
	s.Loopback.Extra["GET "+chatclient.BridgeInfoPath] = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(info)
	})
	register := func() {
		att, err := almanac.NewAttestation(id, identity.MainnetPrefix, []string{endpoint}, []string{chatproto.ProtocolDigest}, time.Now())
		if err == nil {
			err = registry.Register(att)
		}
		if err != nil {
			log.Warn("local almanac registration failed", "err", err)
		}
	}
	register()
	go func() { // registrations expire after the registry's TTL (48 h); renew well before
		t := time.NewTicker(12 * time.Hour)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				register()
			}
		}
	}()

	chat := &Chat{Address: id.Address(), Endpoint: endpoint, AlmanacURL: info.AlmanacURL, InfoURL: s.LoopbackURL + chatclient.BridgeInfoPath, ReadmeURL: s.LoopbackURL + ReadmePath,
		Bridge: bridge, Conversation: conv, Registry: registry,
		Agentverse: "Agentverse:       not configured (local almanac only; set AGENTVERSE_API_KEY to list the agent)"}
	if o.Chat.AgentverseAPIKey != "" {
		chat.Agentverse = startAgentverse(ctx, o, id, bridge, avBase, readme, log)
	}
	s.chat = chat
	return nil
}

// conversationConfig wires the conversation to this stack: its Temporal client, the prepared
// runs and their repository, the payment's local checkout, the index and proof pages.
func conversationConfig(s *Stack, o Options, log *slog.Logger) conversation.Config {
	limit := o.Settings.Authoring.RateLimit // 0: off
	dataDir := s.Config.DataDir
	remotes := s.ControlPlane.Deliverer.Remotes
	var checker authoring.BaseChecker
	if o.Chat.BaseCheck {
		// On this stack's own queues, with its client. The task's repository is a prepared
		// fixture, materialized before the draft: nothing to register.
		checker = &basecheck.Choice{Mode: basecheck.ModeQueues, Client: s.Client}
	}
	cfg := conversation.Config{
		Temporal: s.Client, StateFile: filepath.Join(dataDir, "chat", "sessions.json"), RunsDir: o.RunsDir,
		PrepareRun: func(ctx context.Context, r *runs.Run) error {
			if err := runs.Materialize(ctx, remotes, dataDir, r.Contract); err != nil {
				return err
			}
			if o.Chat.Faults != nil {
				o.Chat.Faults.Set(r.Contract.ContractID, r.Spec.PreviewFaults)
			}
			return nil
		},
		Author: workers.NewAuthor(workers.AuthorOptions{DataDir: dataDir, Allow: o.Allow, Limit: limit, Checker: checker}),
		Trust:  func() (contractapi.Trust, error) { return workers.ReadTrust(dataDir) },
		Index:  s.ControlPlane.Index, ExecutorNote: o.Chat.ExecutorNote, Timeouts: o.Chat.Timeouts, Logger: log, Keys: keyFingerprints(dataDir),
		ConcurrentQuotes: o.Chat.ConcurrentQuotes,
		ProofURL:         func(id string) string { return s.LoopbackURL + "/proofs/" + url.PathEscape(id) + "/" },
	}
	// The repositories tasks may name: those of the prepared runs (the finance fixture).
	seen := map[string]bool{}
	for _, name := range runs.List(o.RunsDir) {
		r, err := runs.Load(o.RunsDir, name)
		if err != nil {
			continue
		}
		rc := r.Contract
		slug := rc.Repo.Key()
		path, err := remotes.Path(rc.Repo.Owner, rc.Repo.Name)
		if seen[slug] || err != nil {
			continue
		}
		seen[slug] = true
		cfg.Repos = append(cfg.Repos, conversation.Repo{Slug: slug, Path: path, URL: rc.Repo.URL,
			Prepare: func(ctx context.Context) error { return runs.Materialize(ctx, remotes, dataDir, rc) }})
	}
	// "pay" completes the local Stripe test double's checkout; real Stripe's is paid in a browser.
	if s.Services != nil && s.Services.LocalStripe != nil {
		cfg.PaymentLabel = localstripe.Label
		cfg.Checkout = func(ctx context.Context, id string) error {
			_, err := web.CompleteTestCheckout(ctx, s.Client, id)
			return err
		}
	}
	return cfg
}

// startAgentverse lists the agent on Agentverse in the background and, without a public
// endpoint, polls its mailbox. It returns the line `signoff dev` prints.
func startAgentverse(ctx context.Context, o Options, id *identity.Identity, bridge *chatbridge.Bridge, base, readme string, log *slog.Logger) string {
	name := agentName(o)
	client := &agentverse.Client{BaseURL: base, APIKey: o.Chat.AgentverseAPIKey, Team: o.Chat.AgentverseTeam, Identity: id}
	agent := agentverse.ChatAgent{Name: name, Endpoint: o.Chat.Endpoint, Mailbox: o.Chat.Endpoint == "",
		Profile: agentverse.Profile{Description: "Fixed-price web changes, called done only when a real browser verifies the delivered commit.",
			Readme: readme, StarterPrompts: starterPrompts}}
	go func() {
		if err := client.RegisterChatAgent(ctx, agent); err != nil {
			log.Warn("agentverse registration failed", "err", err) // the error never carries the key
			return
		}
		log.Info("registered on agentverse", "address", id.Address())
	}()
	how := "endpoint " + o.Chat.Endpoint
	if agent.Mailbox {
		how = "mailbox, polled"
		mb := &agentverse.Mailbox{Client: client, Deliver: bridge.Deliver, Logger: log}
		go func() { _ = mb.Run(ctx) }()
	}
	return fmt.Sprintf("Agentverse:       registering %s as %q (%s)", id.Address(), name, how)
}

var starterPrompts = []string{
	"Make the Watchlist page work well on mobile",
	"run W1",
	"status W2",
	"help",
}

// readmeConfig describes the running configuration for the Agentverse README: which
// external services are switched on and which run on their local default.
func agentName(o Options) string {
	if o.Chat.Name == "" {
		return "Signoff"
	}
	return o.Chat.Name
}

// agentReadme renders the agent README from the running configuration. It names the keys the
// proofs are signed with: the workers wrote them before chat starts.
func agentReadme(o Options, address string, log *slog.Logger) string {
	rc := readmeConfig(agentName(o), address, o)
	if k, err := datadir.ReadPublishedKeys(o.DataDir); err == nil {
		rc.VerifierFingerprint, rc.ControlFingerprint = k.VerifierFingerprint, k.ControlFingerprint
	} else {
		log.Warn("the agent README names no keys", "err", err)
	}
	readme, err := agentverse.RenderReadme(rc)
	if err != nil {
		log.Warn("agent readme", "err", err)
	}
	return readme
}

func readmeConfig(name, address string, o Options) agentverse.ReadmeConfig {
	state := func(set bool, on, off string) string {
		if set {
			return on + " (configured)"
		}
		return off
	}
	cfg := o.Settings
	return agentverse.ReadmeConfig{
		Name: name, Address: address,
		Tagline: "Refuses to call a software task done until an independent browser run verifies the approved contract on the delivered commit.",
		Description: "Describe a change to a web app. Signoff surveys the repository, quotes a fixed-price contract of " +
			"executable browser criteria with its hash, and waits for your approval of exactly that hash. A coding CLI " +
			"makes the change; an independent verifier drives Chromium against the delivered commit; a deterministic " +
			"policy decides. The payment is authorized up front and captured only when the verdict is satisfied; " +
			"otherwise the authorization is cancelled.",
		Usage: starterPrompts,
		Resources: []agentverse.ExternalResource{
			{Name: "Agentverse", EnvVar: "AGENTVERSE_API_KEY", Purpose: "listing and mailbox for ASI:One (configured)", Required: true},
			{Name: "Stripe", EnvVar: workers.EnvStripeSecretKey, Purpose: state(cfg.Stripe.SecretKey != "",
				"manual-capture payment authorizations", "payments: local Stripe test double, no money moves")},
			{Name: "GitHub", EnvVar: workers.EnvGitHubToken, Purpose: state(cfg.GitHub.Token != "",
				"draft pull requests and commit statuses", "deliverable: local bare git remote")},
			{Name: "Browserbase", EnvVar: "BROWSERBASE_API_KEY", Purpose: state(cfg.Browser.BrowserbaseAPIKey != "",
				"remote browser for verification", "verification: local Chromium")},
			{Name: "Sentry", EnvVar: "SENTRY_AUTH_TOKEN", Purpose: state(cfg.Sentry.AuthToken != "",
				"runtime error gate", "runtime gate: page errors only")},
			{Name: "Coding CLI", EnvVar: workers.EnvExecutorCommand, Purpose: state(cfg.Executor.Command != "",
				"executor (Codex CLI, Claude Code, ...)", "executor: prepared runs only")},
			{Name: "Temporal", EnvVar: "TEMPORAL_API_KEY", Purpose: state(cfg.TemporalAPIKey != "",
				"durable workflows on a Temporal cluster", "durable workflows: embedded Temporal server")},
		},
	}
}

// keyFingerprints are the published keys' fingerprints, empty when they cannot be read.
func keyFingerprints(dataDir string) conversation.KeyFingerprints {
	k, err := datadir.ReadPublishedKeys(dataDir)
	if err != nil {
		return conversation.KeyFingerprints{}
	}
	return conversation.KeyFingerprints{Verifier: k.VerifierFingerprint, Control: k.ControlFingerprint}
}
