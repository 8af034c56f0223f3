package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/github"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// Environment variables that switch the control queue's services on. Each has an honest
// local default: without them nothing leaves this machine and no money moves.
const (
	// EnvStripeSecretKey switches payments to Stripe (sk_test_... or sk_live_...; rk_ keys
	// too). Unset: the local Stripe test double.
	EnvStripeSecretKey = "STRIPE_SECRET_KEY"
	// EnvStripeWebhookSecret verifies Stripe-Signature on /webhooks/stripe. Unset with a
	// Stripe key: no webhook endpoint, the workflow polls Stripe.
	EnvStripeWebhookSecret = "STRIPE_WEBHOOK_SECRET"
	// EnvStripeAPIBase points the Stripe key at another Stripe-compatible endpoint (https, or
	// http on loopback); unset: api.stripe.com.
	EnvStripeAPIBase = "STRIPE_API_BASE"
	// EnvGitHubToken switches the deliverable to GitHub draft PRs (control queue only).
	// Unset: the local bare remote, with the PR record in Signoff's store.
	EnvGitHubToken = "GITHUB_TOKEN"
	// EnvGitHubWebhookSecret verifies X-Hub-Signature-256 on /webhooks/github.
	EnvGitHubWebhookSecret = "GITHUB_WEBHOOK_SECRET"
	// EnvGitHubAPIURL, EnvGitHubGitURL and EnvGitHubBaseBranch adjust the GitHub deliverer
	// (GitHub Enterprise, a base branch other than the default one).
	EnvGitHubAPIURL     = "GITHUB_API_URL"
	EnvGitHubGitURL     = "GITHUB_GIT_URL"
	EnvGitHubBaseBranch = "GITHUB_BASE_BRANCH"
)

// Webhook paths on the public listener.
const (
	StripeWebhookPath = "/webhooks/stripe"
	GitHubWebhookPath = "/webhooks/github"
)

// ServiceOptions say how to open the control queue's services.
type ServiceOptions struct {
	// StripeWebhookURL is where the local Stripe test double posts its signed events (a
	// loopback URL ending in StripeWebhookPath); "" sends none and the workflow polls.
	StripeWebhookURL string
	// ReturnURL is where the payer lands after a checkout; default the loopback listener.
	ReturnURL string
	// Log receives one line per service decision and the test double's log lines.
	Log *slog.Logger
	// PaymentConfig adjusts the Stripe client before it is built (tests: clock, margin).
	PaymentConfig func(*payment.Config)
}

// Services are the control queue's payment provider and deliverable, chosen from the
// environment: Stripe or the local Stripe test double; GitHub or the local bare remote.
type Services struct {
	Payments *payment.Payments
	// LocalStripe is the running local Stripe test double; nil with real Stripe.
	LocalStripe *localstripe.Server
	// StripeWebhookSecret verifies /webhooks/stripe; "" mounts no endpoint.
	StripeWebhookSecret string
	// PaymentLabel says, for people, where payments go and whether money moves.
	PaymentLabel string
	// GitHub is the GitHub deliverer; nil keeps the local bare remote.
	GitHub *github.Deliverer
	// GitHubWebhookSecret verifies /webhooks/github; "" mounts no endpoint.
	GitHubWebhookSecret string

	log     *slog.Logger
	closers []func()
}

// defaultReturnURL is `signoff dev`'s loopback listener, for a process that has none.
const defaultReturnURL = "http://127.0.0.1:8480/"

// OpenServices starts or connects the control queue's services. Without STRIPE_SECRET_KEY it
// starts the local Stripe test double (state under the data dir, stripe-mock from .bin/),
// and fails with the setup command when stripe-mock is missing. Close stops what it started.
func OpenServices(ctx context.Context, cfg Config, o ServiceOptions) (_ *Services, err error) {
	st, gh := cfg.Settings.Stripe, cfg.Settings.GitHub
	s := &Services{log: o.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ret := o.ReturnURL
	if ret == "" && cfg.LoopbackURL != "" {
		ret = strings.TrimRight(cfg.LoopbackURL, "/") + "/"
	}
	if ret == "" {
		ret = defaultReturnURL
	}
	pc := payment.Config{}
	if st.SecretKey != "" {
		if err := s.openStripe(st, &pc); err != nil {
			return nil, err
		}
	} else if err := s.openLocalStripe(ctx, cfg, o.StripeWebhookURL, &pc); err != nil {
		return nil, err
	}
	if o.PaymentConfig != nil {
		o.PaymentConfig(&pc)
	}
	client, err := payment.New(pc)
	if err != nil {
		return nil, fmt.Errorf("payment client: %w", err)
	}
	s.Payments = &payment.Payments{Client: client, Provider: payment.ProviderStripe, ReturnURL: ret}
	if s.LocalStripe != nil {
		s.Payments.Provider, s.Payments.Local = payment.ProviderLocal, true
	}
	if gh.Token != "" {
		layout := cfg.Layout()
		s.GitHub, err = github.New(github.Config{Token: gh.Token, APIURL: gh.APIURL, GitURL: gh.GitURL,
			BaseBranch: gh.BaseBranch, Remotes: localgit.Remotes{Root: layout.Remotes}, Store: layout.GitHubPRs,
			Allow: executor.Allowlist(cfg.Allow)})
		if err != nil {
			return nil, fmt.Errorf("%s is set but the GitHub deliverer cannot start: %w", EnvGitHubToken, err)
		}
		s.GitHubWebhookSecret = gh.WebhookSecret
		if s.GitHubWebhookSecret == "" {
			s.log.Warn(EnvGitHubWebhookSecret + " is not set: no GitHub webhook endpoint; the PR head is re-read before eligibility is declared")
		}
		s.log.Info("deliverable: GitHub draft pull requests (write token on the control queue only)")
	}
	return s, nil
}

func (s *Services) openStripe(st settings.Stripe, pc *payment.Config) error {
	key := st.SecretKey
	mode := ""
	switch {
	case strings.HasPrefix(key, "sk_test_"), strings.HasPrefix(key, "rk_test_"):
		mode = "Stripe test mode: no money moves"
	case strings.HasPrefix(key, "sk_live_"), strings.HasPrefix(key, "rk_live_"):
		mode = "Stripe LIVE mode: real card authorizations, captured only when satisfied"
	default:
		return fmt.Errorf("%s does not look like a Stripe secret key (sk_test_..., sk_live_..., rk_...)", EnvStripeSecretKey)
	}
	pc.APIKey = key
	if base := st.APIBase; base != "" {
		if err := tokenSafeURL(base); err != nil {
			return fmt.Errorf("%s: %w", EnvStripeAPIBase, err)
		}
		pc.BaseURL = base
		mode += " (API at " + base + ")"
	}
	s.StripeWebhookSecret = st.WebhookSecret
	if s.StripeWebhookSecret == "" {
		s.log.Warn(EnvStripeWebhookSecret + " is not set: no Stripe webhook endpoint; the workflow polls Stripe")
	}
	s.PaymentLabel = mode
	s.log.Info("payment: " + mode)
	return nil
}

func (s *Services) openLocalStripe(ctx context.Context, cfg Config, webhookURL string, pc *payment.Config) error {
	srv, err := localstripe.Start(ctx, localstripe.Config{DataDir: cfg.Layout().Stripe, WebhookURL: webhookURL, Logger: s.log,
		StripeMockPath: cfg.Settings.StripeMock})
	if err != nil {
		return fmt.Errorf("payment (no %s, so the local Stripe test double): %w", EnvStripeSecretKey, err)
	}
	s.LocalStripe = srv
	s.closers = append(s.closers, func() { _ = srv.Close() })
	pc.APIKey, pc.BaseURL = srv.APIKey(), srv.URL()
	if webhookURL != "" {
		s.StripeWebhookSecret = srv.WebhookSecret() // the double signs what it posts there
	}
	s.PaymentLabel = "local Stripe test double at " + srv.URL() + " (test mode: no real Stripe, no money moves)"
	s.log.Info("payment: " + s.PaymentLabel)
	return nil
}

// tokenSafeURL accepts https, or http to loopback: a secret key travels to this URL.
func tokenSafeURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.User != nil {
		return errors.New("credentials do not belong in the URL")
	}
	if u.Scheme == "https" && u.Host != "" {
		return nil
	}
	if ip := net.ParseIP(u.Hostname()); u.Scheme == "http" && (u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return fmt.Errorf("%q: a secret key travels only over https (or http to loopback)", raw)
}

// Apply makes the services the control plane's: l.Payments, and l.Publisher with GitHub.
func (s *Services) Apply(l *ControlPlane) {
	l.Payments = s.Payments
	if s.GitHub != nil {
		l.Publisher = s.GitHub
	}
}

// Describe is what a person starting Signoff should read about its services.
func (s *Services) Describe(cfg Config) []string {
	pay := "Payment:          " + s.PaymentLabel
	switch {
	case s.StripeWebhookSecret != "":
		pay += "; webhook " + StripeWebhookPath
	default:
		pay += "; no webhook, polled"
	}
	del := "Deliverable:      local bare remotes in " + cfg.Layout().Remotes + " (pushes to signoff/* branches are watched)"
	if s.GitHub != nil {
		del = "Deliverable:      GitHub draft pull requests"
		if s.GitHubWebhookSecret != "" {
			del += "; webhook " + GitHubWebhookPath
		}
	}
	return []string{pay, del}
}

// Close stops the local Stripe test double (if this process started it).
func (s *Services) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Webhooks are the public listener's handlers, by path: Stripe's (payment_authorized) and
// GitHub's (pr_head_changed). Each verifies its signature before reading the body, and the
// workflow confirms with the provider before it acts on either.
func (s *Services) Webhooks(sig contractclient.Signals) (map[string]http.Handler, error) {
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	out := map[string]http.Handler{}
	if s.StripeWebhookSecret != "" {
		told := &onceSet{}
		h, err := payment.NewWebhookHandler(payment.WebhookConfig{Secret: s.StripeWebhookSecret, Logger: s.log,
			OnEvent: func(ctx context.Context, ev payment.Event) error {
				switch ev.Kind {
				case payment.EventCheckoutCompleted, payment.EventAuthorized:
				default:
					return nil // capture and cancel are Signoff's own doing; nothing to tell
				}
				// Stripe reports one authorization twice (checkout completed, amount
				// capturable); the workflow needs to hear it once.
				key := ev.ContractID + "/" + ev.PaymentIntentID
				if ev.PaymentIntentID != "" && told.has(key) {
					return nil
				}
				err := signalContract(ctx, s.log, ev.ContractID, contractapi.SignalPaymentAuthorized, func(ctx context.Context) error {
					return sig.PaymentAuthorized(ctx, ev.ContractID,
						contractapi.PaymentAuthorized{SessionID: ev.CheckoutSessionID, PaymentIntentID: ev.PaymentIntentID, Source: "stripe-webhook"})
				})
				if err == nil && ev.PaymentIntentID != "" {
					told.add(key)
				}
				return err
			}})
		if err != nil {
			return nil, err
		}
		out[StripeWebhookPath] = h
	}
	if s.GitHub != nil && s.GitHubWebhookSecret != "" {
		h, err := github.NewWebhook(s.GitHubWebhookSecret, func(ctx context.Context, ev github.HeadEvent) error {
			return signalContract(ctx, s.log, ev.ContractID, contractapi.SignalPRHeadChanged, func(ctx context.Context) error {
				return sig.PRHeadChanged(ctx, ev.ContractID, contractapi.PRHeadChanged{SHA: ev.HeadSHA, Source: "github-webhook"})
			})
		})
		if err != nil {
			return nil, err
		}
		out[GitHubWebhookPath] = h
	}
	return out, nil
}

// onceSet remembers recent keys, bounded: a forgotten key costs one extra, harmless signal.
type onceSet struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (o *onceSet) has(k string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.keys[k]
}

func (o *onceSet) add(k string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys == nil || len(o.keys) >= 4096 {
		o.keys = map[string]bool{}
	}
	o.keys[k] = true
}

// signalContract sends a contract's workflow the signal called name. A contract Signoff no longer runs (finished
// and past retention, or another installation's) is acknowledged, so the sender stops
// redelivering; any other failure asks for redelivery.
func signalContract(ctx context.Context, log *slog.Logger, contractID, name string, send func(context.Context) error) error {
	if !contracts.ValidContractID(contractID) {
		log.Warn("webhook names no Signoff contract; ignored", "signal", name)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := send(ctx)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		log.Info("webhook for a contract with no running workflow; acknowledged", "contract", contractID, "signal", name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("signal %s to %s: %w", name, contractID, err)
	}
	log.Info("webhook signalled the workflow", "contract", contractID, "signal", name)
	return nil
}

// WatchHeads starts the local deliverable's head watcher (see HeadWatch) unless GitHub is
// the deliverable; stop ends it.
func (s *Services) WatchHeads(sig contractclient.Signals, l *ControlPlane) (stop func()) {
	if s.GitHub != nil {
		return func() {}
	}
	w := &HeadWatch{Signal: sig, Index: l.Index, PRs: l.Deliverer, Log: s.log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
