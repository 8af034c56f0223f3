// Package localstripe is Signoff's local Stripe test double: an HTTP server on loopback that
// stripe-go reaches exactly as it reaches api.stripe.com. Every API request is first checked
// by Stripe's own stripe-mock (a child process), whose 4xx answers are passed through
// unchanged; the double then keeps the state stripe-mock does not: Checkout Sessions with a
// local test checkout page, manual-capture PaymentIntents, idempotent replays, and signed
// webhooks. No real Stripe is involved and no money moves; every page and log line says so.
package localstripe

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/internal/hostcheck"
)

// Label is what people are shown beside a payment made against the double (chat's "pay").
const Label = "local Stripe test double: no money moves"

// noticeText labels everything the double shows or stores.
const noticeText = "Local Stripe test double: no real Stripe, no money moves."

// logPrefix starts every log line the double writes.
const logPrefix = "local Stripe test double (no money moves): "

// Config configures a double. Only DataDir is required.
type Config struct {
	// DataDir holds the state file (created 0700 if missing).
	DataDir string
	// Addr is the loopback address to listen on. Empty: the address used last time (so
	// checkout links survive a restart), else a free port on 127.0.0.1.
	Addr string
	// StripeMockURL uses an already running stripe-mock instead of starting one.
	StripeMockURL string
	// StripeMockPath is the stripe-mock binary (checked); empty: found by FindStripeMock.
	StripeMockPath string
	// APIKey is the only key the double accepts (must look like sk_test_...). Empty: the
	// persisted one, else a new random key.
	APIKey string
	// WebhookSecret signs webhook events. Empty: the persisted one, else a new random secret.
	WebhookSecret string
	// WebhookURL receives signed events; loopback only. Empty: events are not delivered
	// (the workflow's Status polling still sees every change).
	WebhookURL string
	// Logger receives the double's log lines; nil discards them.
	Logger *slog.Logger
	// Now is the double's clock for object timestamps and expiry; nil means time.Now.
	Now func() time.Time
}

// Server is a running double.
type Server struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	mock    *StripeMock // nil when cfg.StripeMockURL is used
	mockURL string
	fwd     *http.Client
	ln      net.Listener
	srv     *http.Server
	base    string

	mu         sync.Mutex // guards st and webhookURL; held for a whole API request
	st         *state
	webhookURL string
	outbox     []outEvent // events of the current change, sent once it is saved

	hooks     *http.Client
	hookCtx   context.Context
	hookStop  context.CancelFunc
	hookWG    sync.WaitGroup
	closeOnce sync.Once
}

// Start loads the state from cfg.DataDir, starts stripe-mock (unless cfg.StripeMockURL is
// set) and serves the double on loopback. ctx bounds start-up only. Call Close to stop both.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("local Stripe test double: Config.DataDir is required")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("local Stripe test double data dir: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	st, err := loadState(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s.st = st
	if err := s.initSecrets(); err != nil {
		return nil, err
	}
	if cfg.WebhookURL != "" {
		if err := checkLoopbackURL(cfg.WebhookURL); err != nil {
			return nil, fmt.Errorf("local Stripe test double webhook URL: %w", err)
		}
		s.webhookURL = cfg.WebhookURL
	}

	s.mockURL = cfg.StripeMockURL
	if s.mockURL == "" {
		path, err := FindStripeMock(cfg.StripeMockPath)
		if err != nil {
			return nil, err
		}
		if s.mock, err = StartStripeMock(ctx, path, s.log); err != nil {
			return nil, err
		}
		s.mockURL = s.mock.URL()
	} else if err := checkLoopbackURL(s.mockURL); err != nil {
		return nil, fmt.Errorf("stripe-mock URL: %w", err)
	}
	s.fwd = &http.Client{Timeout: 15 * time.Second}
	s.hooks = &http.Client{Timeout: 15 * time.Second}
	s.hookCtx, s.hookStop = context.WithCancel(context.Background())

	if s.ln, err = s.listen(); err != nil {
		s.stopMock()
		return nil, err
	}
	s.base = "http://" + s.ln.Addr().String()
	s.st.LastAddr = s.ln.Addr().String()
	if err := saveState(cfg.DataDir, s.st); err != nil {
		s.ln.Close()
		s.stopMock()
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/v1/", s.serveAPI)
	mux.HandleFunc("GET /checkout/{id}", s.serveCheckoutPage)
	mux.HandleFunc("POST /checkout/{id}", s.serveCheckoutAuthorize)
	mux.HandleFunc("GET /{$}", s.serveIndex)
	s.srv = &http.Server{
		Handler:           hostcheck.Wrap(mux, s.ln.Addr()), // its checkout pages are loopback pages too
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	go func() {
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf(slog.LevelError, "serve failed", "err", err)
		}
	}()
	s.logf(slog.LevelInfo, "listening", "url", s.base, "stripe_mock", s.mockURL, "data_dir", cfg.DataDir)
	return s, nil
}

// listen binds the configured loopback address, else the last one, else a free port.
func (s *Server) listen() (net.Listener, error) {
	addr := s.cfg.Addr
	if addr != "" {
		if err := checkLoopbackAddr(addr); err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("local Stripe test double listen %s: %w", addr, err)
		}
		return ln, nil
	}
	if last := s.st.LastAddr; last != "" && checkLoopbackAddr(last) == nil {
		if ln, err := net.Listen("tcp", last); err == nil {
			return ln, nil
		}
		s.logf(slog.LevelWarn, "last address is taken; checkout links from before the restart will not open", "addr", last)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("local Stripe test double listen: %w", err)
	}
	return ln, nil
}

// initSecrets fixes the API key and webhook secret: configured, else persisted, else new.
func (s *Server) initSecrets() error {
	if k := s.cfg.APIKey; k != "" {
		if !strings.HasPrefix(k, "sk_test_") {
			return errors.New("local Stripe test double: APIKey must start with sk_test_ (it is never a live key)")
		}
		s.st.APIKey = k
	} else if s.st.APIKey == "" {
		s.st.APIKey = "sk_test_local" + randToken(24)
	}
	if w := s.cfg.WebhookSecret; w != "" {
		s.st.WebhookSecret = w
	} else if s.st.WebhookSecret == "" {
		s.st.WebhookSecret = "whsec_local" + randToken(32)
	}
	return nil
}

// URL is the base URL to give stripe-go (BackendConfig.URL) instead of https://api.stripe.com.
func (s *Server) URL() string { return s.base }

// APIKey is the secret key stripe-go must send.
func (s *Server) APIKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.APIKey
}

// WebhookSecret is the secret the double signs webhook events with.
func (s *Server) WebhookSecret() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.WebhookSecret
}

// StripeMockPID is the child stripe-mock's PID, or 0 when an external one is used.
func (s *Server) StripeMockPID() int {
	if s.mock == nil {
		return 0
	}
	return s.mock.PID()
}

// SetWebhookURL sets where signed events go (a loopback URL), or "" to stop delivering.
func (s *Server) SetWebhookURL(u string) error {
	if u != "" {
		if err := checkLoopbackURL(u); err != nil {
			return fmt.Errorf("local Stripe test double webhook URL: %w", err)
		}
	}
	s.mu.Lock()
	s.webhookURL = u
	s.mu.Unlock()
	return nil
}

// Close stops serving, abandons undelivered webhooks and stops the stripe-mock child by PID.
func (s *Server) Close() error {
	var errs []error
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down local Stripe test double: %w", err))
		}
		s.hookStop()
		s.hookWG.Wait()
		if err := s.stopMock(); err != nil {
			errs = append(errs, err)
		}
		s.logf(slog.LevelInfo, "stopped")
	})
	return errors.Join(errs...)
}

func (s *Server) stopMock() error {
	if s.mock == nil {
		return nil
	}
	return s.mock.Stop()
}

// logf writes one log line, always labelled as the test double.
func (s *Server) logf(level slog.Level, msg string, args ...any) {
	s.log.Log(context.Background(), level, logPrefix+msg, args...)
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	renderPage(w, http.StatusOK, pageData{Title: "Local Stripe test double", Message: "This server stands in for the Stripe API on this machine. " + noticeText})
}

// checkLoopbackAddr refuses a listen address that is not on loopback.
func checkLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not on loopback (use 127.0.0.1)", addr)
	}
	return nil
}

// checkLoopbackURL refuses a URL whose host is not loopback: the double only talks to this machine.
func checkLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback URL", raw)
	}
	return nil
}

// randToken returns n random base62 characters.
func randToken(n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
