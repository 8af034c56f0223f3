package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/settings"
)

// Browser modes recorded in evidence.
const (
	ModeLocal = "local"
	ModeCDP   = "cdp"
	ModeHTTP  = "http" // no browser was needed (http criteria only, or the run stopped early)
)

// BrowserSource provides the browser one verification run uses. Local launches Chromium, CDP
// connects to one that is already running, Browserbase creates a hosted session first.
type BrowserSource interface {
	Open(ctx context.Context, pw *playwright.Playwright) (*BrowserSession, error)
}

// BrowserSession is an open browser and what evidence records about it.
type BrowserSession struct {
	Browser playwright.Browser
	Info    contracts.Browser
	release func() error
}

// Close releases the browser: closes a launched one, disconnects from a remote one.
func (s *BrowserSession) Close() error {
	if s == nil || s.release == nil {
		return nil
	}
	return s.release()
}

// Sandbox values recorded in evidence (contracts.Browser.Sandbox).
const (
	// SandboxChromium: launched here, as the unprivileged browser user, with Chromium's own
	// namespace and seccomp-bpf sandbox on.
	SandboxChromium = "chromium"
	// SandboxNone: launched here as the browser user but with the sandbox off, because the
	// operator allowed it where user namespaces are unavailable.
	SandboxNone = "none"
	// SandboxRemote: not launched here (CDP, Browserbase); the remote host confines it.
	SandboxRemote = "remote"
)

// LaunchArgs are the Chromium flags for headless verification: nothing that phones home or
// updates itself mid-run. The sandbox stays on (see Local).
var LaunchArgs = []string{
	"--disable-gpu",
	"--disable-dev-shm-usage",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--no-first-run",
	"--no-default-browser-check",
	// A person's browser: navigator.webdriver false, and WebRTC only through the context's
	// proxy (which reaches nothing but the preview), never straight to a host or peer.
	"--disable-blink-features=AutomationControlled",
	"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
	"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	// A camera and a microphone to list, as every phone and most desktops have: a browser
	// with none is a server's. Their labels stay hidden and nothing grants a page their
	// stream.
	"--use-fake-device-for-media-stream",
	// Chromium 156 opens every window (one per page here) with its omnibox popups preloaded
	// as WebUI pages in a renderer of their own, which a headless verifier never shows. The
	// launcher merges this list with Playwright's (Chromium keeps only the last one).
	"--disable-features=" + strings.Join(noBrowserUI, ","),
}

// noBrowserUI are the browser's own WebUI pages a headless window need not load.
var noBrowserUI = []string{"WebUIOmniboxPopup", "WebUIOmniboxFullPopup", "WebUIOmniboxAimPopup"}

// Local launches the Chromium binary headless for each run. Chromium renders the repository's
// code, so it never runs as the worker: Playwright starts this executable as a launcher (see
// launcher.go) that execs Chromium as User with an environment of its own and its sandbox on.
type Local struct {
	Chromium string   // default DefaultChromium
	Args     []string // default LaunchArgs
	// User is who a root worker runs Chromium as; default DefaultBrowserUser.
	User string
	// AllowNoSandbox launches without Chromium's sandbox where user namespaces are missing,
	// instead of failing with a SetupError.
	AllowNoSandbox bool
}

// Open launches Chromium.
func (l Local) Open(ctx context.Context, pw *playwright.Playwright) (*BrowserSession, error) {
	exe := l.Chromium
	if exe == "" {
		exe = DefaultChromium
	}
	if st, err := os.Stat(exe); err != nil || st.IsDir() {
		return nil, &SetupError{Missing: "Chromium at " + exe, Err: err}
	}
	args := l.Args
	if args == nil {
		args = LaunchArgs
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	plan, err := planLaunch(ctx, exe, l.User, l.AllowNoSandbox)
	if err != nil {
		return nil, err
	}
	env, err := plan.env()
	if err != nil {
		return nil, err
	}
	sandbox := SandboxChromium
	if !plan.spec.Sandbox {
		sandbox = SandboxNone
	}
	br, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath:  playwright.String(plan.launcher),
		ChromiumSandbox: playwright.Bool(plan.spec.Sandbox),
		Env:             env,
		Headless:        playwright.Bool(true),
		Args:            args,
		Timeout:         playwright.Float(60000),
	})
	if err != nil {
		return nil, fmt.Errorf("launch chromium %s: %w", exe, err)
	}
	return &BrowserSession{
		Browser: br,
		Info:    contracts.Browser{Name: "chromium", Version: br.Version(), Mode: ModeLocal, Sandbox: sandbox},
		release: func() error { return br.Close() },
	}, nil
}

// CDP connects to a running Chromium's DevTools endpoint: http://host:port (Playwright reads
// /json/version) or the ws:// browser URL.
type CDP struct {
	Endpoint string
	Headers  map[string]string
	// RecordingURL, when known, is recorded in evidence (hosted browsers keep a session recording).
	RecordingURL string
}

// Open connects over CDP. Closing the session only disconnects; the remote browser keeps
// running.
func (c CDP) Open(ctx context.Context, pw *playwright.Playwright) (*BrowserSession, error) {
	if c.Endpoint == "" {
		return nil, errors.New("cdp: no endpoint")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	br, err := pw.Chromium.ConnectOverCDP(c.Endpoint, playwright.BrowserTypeConnectOverCDPOptions{
		Headers: c.Headers,
		Timeout: playwright.Float(30000),
	})
	if err != nil {
		// The endpoint may carry credentials (hosted browsers put keys in the query): say
		// what failed without repeating it.
		return nil, fmt.Errorf("connect over cdp: %w", redactErr(err, c.Endpoint))
	}
	return &BrowserSession{
		Browser: br,
		Info:    contracts.Browser{Name: "chromium", Version: br.Version(), Mode: ModeCDP, RecordingURL: c.RecordingURL, Sandbox: SandboxRemote},
		release: func() error { return br.Close() },
	}, nil
}

// Shared opens its Source once and hands the same browser to every run until Close. Runs stay
// isolated by their fresh browser contexts; this saves the launch (0.3-0.9 s) per run.
type Shared struct {
	Source BrowserSource

	mu      sync.Mutex
	session *BrowserSession
}

// Open returns the shared browser, opening it on first use (or again after it disconnected).
func (s *Shared) Open(ctx context.Context, pw *playwright.Playwright) (*BrowserSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil && !s.session.Browser.IsConnected() {
		_ = s.session.Close()
		s.session = nil
	}
	if s.session == nil {
		sess, err := s.Source.Open(ctx, pw)
		if err != nil {
			return nil, err
		}
		s.session = sess
	}
	return &BrowserSession{Browser: s.session.Browser, Info: s.session.Info}, nil
}

// Close releases the shared browser.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		return nil
	}
	err := s.session.Close()
	s.session = nil
	return err
}

// SourceFor picks the browser the settings ask for: Browserbase when its API key and project
// are set, a CDP endpoint when SIGNOFF_CDP_URL is set, else local Chromium as cfg says.
func SourceFor(cfg Config, b settings.Browser) BrowserSource {
	if b.BrowserbaseAPIKey != "" && b.BrowserbaseProjectID != "" {
		return &Browserbase{APIKey: b.BrowserbaseAPIKey, ProjectID: b.BrowserbaseProjectID, BaseURL: b.BrowserbaseURL}
	}
	if b.CDPURL != "" {
		return CDP{Endpoint: b.CDPURL}
	}
	return cfg.local()
}

// local is the Local source the configuration describes.
func (c Config) local() Local {
	c = c.withDefaults()
	return Local{Chromium: c.Chromium, User: c.BrowserUser, AllowNoSandbox: c.AllowNoBrowserSandbox}
}

// redactErr replaces a secret-bearing string in an error message.
func redactErr(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	return &redacted{err: err, secret: secret}
}

type redacted struct {
	err    error
	secret string
}

func (r *redacted) Error() string { return strings.ReplaceAll(r.err.Error(), r.secret, "<endpoint>") }
func (r *redacted) Unwrap() error { return r.err }
