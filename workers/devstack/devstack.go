// Package devstack is the composition root: it composes one Signoff process from Temporal
// (embedded, or an external cluster), the workers of the queues it runs, and, unless
// headless, the two HTTP listeners. `signoff dev`, `signoff worker`, `signoff replay` and
// the end-to-end tests all start through it.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/hostcheck"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/internal/verify"
	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/web/proofpage"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractclient"
)

// Options configure a stack.
type Options struct {
	DataDir string
	// Dial reaches an external cluster; an empty Address runs the embedded server.
	Dial temporal.DialConfig
	// ProofDir overrides where proofs are written (default: the data dir's proofs/).
	ProofDir string
	// Artifacts is the artifact store's URL the queues share (artifacts.Open); "" is
	// datadir.DefaultArtifactsURL, a folder in the data dir, for one machine.
	Artifacts string
	// TemporalPort and UIPort for the embedded server (embedded.AnyPort picks free ones;
	// UIPort 0 turns the Web UI off).
	TemporalPort, UIPort int
	// UIWriteActions opts the embedded Web UI into write actions, behind a per-process token
	// (embedded.Config.UIWriteActions); off, the UI is read-only.
	UIWriteActions bool
	RetentionDays  int
	// LoopbackAddr serves people on this machine; PublicAddr serves webhooks and chat.
	LoopbackAddr, PublicAddr string
	// PublicHosts are the names the public listener is reached by from outside (a tunnel or
	// proxy in front of it, "host" or "host:port"), besides Chat.Endpoint's host. Requests
	// with any other name as Host are refused (DNS rebinding).
	PublicHosts []string
	RunsDir     string
	Allow       []string
	// Control, Execute, Verify say which queues this process works.
	Control, Execute, Verify bool
	// Headless runs only Temporal and the workers (and the control queue's PR head watcher):
	// no loopback or public listener, so no pages, webhooks or chat (`signoff worker`).
	Headless bool
	// BuildExecute and BuildVerify make those queues' activities once the paths are known.
	BuildExecute func(cfg workers.Config) (*activities.Execute, error)
	BuildVerify  func(cfg workers.Config) (*activities.Verify, func(), error)
	Notifier     capability.Notifier
	Log          io.Writer
	// Interceptors go on every worker of the stack (tests: workers.NewBarrier).
	Interceptors []interceptor.WorkerInterceptor
	// Settings is the process's configuration: it switches real services on (Stripe,
	// GitHub, Browserbase, a coding CLI...) and places the tools. The zero value keeps every
	// service on its local default.
	Settings settings.Settings
	// Chat configures the chat bridge on the public listener.
	Chat ChatOptions
}

// Stack is a running process.
type Stack struct {
	Server       *embedded.Server // nil with an external cluster
	Client       client.Client
	Namespace    string
	ControlPlane *workers.ControlPlane
	Config       workers.Config
	LoopbackURL  string
	PublicURL    string
	Loopback     *web.Loopback
	PublicMux    *http.ServeMux
	// Services are the control queue's payment and deliverable (services.go); nil without
	// the control queue.
	Services *workers.Services

	closers []func()
	// notices route the control worker's notices to the chat once it is mounted; chat is
	// the mounted bridge. Both live here, with the stack they belong to.
	notices notifyRouter
	chat    *Chat
}

// Start brings the stack up; on error everything started is stopped again.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	s := &Stack{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	logger := slog.New(slog.NewTextHandler(orDiscard(o.Log), &slog.HandlerOptions{Level: slog.LevelInfo}))

	dial := o.Dial
	if dial.Address == "" {
		if err := os.MkdirAll(filepath.Join(o.DataDir, "temporal"), 0o700); err != nil {
			return nil, err
		}
		// The server logs its own shutdown noise at error level; keep it in a file.
		logFile, err := os.OpenFile(filepath.Join(o.DataDir, "temporal", "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { logFile.Close() })
		srv, err := embedded.Start(ctx, embedded.Config{DataDir: filepath.Join(o.DataDir, "temporal"),
			FrontendPort: o.TemporalPort, UIPort: o.UIPort, UIWriteActions: o.UIWriteActions, RetentionDays: o.RetentionDays, LogLevel: "warn", LogOutput: logFile})
		if err != nil {
			return nil, err
		}
		s.Server = srv
		s.closers = append(s.closers, func() { _ = srv.Stop() })
		dial = srv.DialConfig()
	}
	s.Namespace = dial.Namespace
	if s.Namespace == "" {
		s.Namespace = temporal.DefaultNamespace
	}
	c, err := temporal.Dial(ctx, dial)
	if err != nil {
		return nil, err
	}
	s.Client = c
	s.closers = append(s.closers, c.Close)

	var loopLn, pubLn net.Listener
	if !o.Headless {
		if loopLn, pubLn, err = s.listen(o); err != nil {
			return nil, err
		}
	}

	s.Config = workers.Config{DataDir: o.DataDir, ProofDir: o.ProofDir, RunsDir: o.RunsDir, Allow: o.Allow, LoopbackURL: s.LoopbackURL,
		Settings: o.Settings}
	storeURL := o.Artifacts
	if storeURL == "" {
		storeURL = datadir.DefaultArtifactsURL(o.DataDir)
	}
	if s.Config.Artifacts, err = artifacts.Open(ctx, storeURL); err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	s.closers = append(s.closers, func() { _ = s.Config.Artifacts.Close() })
	s.ControlPlane = workers.NewControlPlane(s.Config)
	if err := openServices(ctx, s, o, logger); err != nil {
		return nil, err
	}
	set := workers.Set{Interceptors: o.Interceptors}
	if o.Control {
		if set.Control, err = workers.NewControl(s.Config, c, s.ControlPlane, notifierFor(s, o)); err != nil {
			return nil, err
		}
	}
	if o.Execute && o.BuildExecute != nil {
		if set.Execute, err = o.BuildExecute(s.Config); err != nil {
			return nil, err
		}
	}
	if o.Verify && o.BuildVerify != nil {
		var stopVerify func()
		if set.Verify, stopVerify, err = o.BuildVerify(s.Config); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, stopVerify)
	}
	stopWorkers, err := workers.Start(c, set)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, stopWorkers)
	if o.Headless {
		if s.Services != nil {
			s.closers = append(s.closers, s.Services.WatchHeads(contractclient.NewSignals(s.Client), s.ControlPlane))
		}
		return s, nil
	}

	uiURL := ""
	if s.Server != nil {
		uiURL = s.Server.UIURL()
	}
	s.Loopback = &web.Loopback{Index: s.ControlPlane.Index, UIURL: uiURL, Namespace: s.Namespace, Extra: map[string]http.Handler{}}
	if h, err := proofHandler(s.Config, s.ControlPlane); err == nil {
		s.Loopback.Extra["/proofs/"] = h
	} else {
		logger.Warn("proof pages unavailable", "error", err)
	}
	s.PublicMux = http.NewServeMux()
	s.PublicMux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	if err := mountServices(s, o); err != nil {
		return nil, err
	}
	if err := mountChat(ctx, s, o); err != nil {
		return nil, err
	}
	s.serve(loopLn, hostcheck.Wrap(s.Loopback.Handler(), loopLn.Addr()))
	s.serve(pubLn, hostcheck.Wrap(s.PublicMux, pubLn.Addr(), publicHosts(o)...))
	return s, nil
}

// listen opens the loopback and public listeners. Until they are served (and Shutdown
// closes them), the stack's closers close them, so an error return leaks neither.
func (s *Stack) listen(o Options) (loopLn, pubLn net.Listener, err error) {
	if loopLn, err = listen(o.LoopbackAddr, "127.0.0.1:0"); err != nil {
		return nil, nil, fmt.Errorf("loopback listener: %w", err)
	}
	s.closers = append(s.closers, func() { loopLn.Close() })
	s.LoopbackURL = "http://" + loopLn.Addr().String()
	if pubLn, err = listen(o.PublicAddr, "127.0.0.1:0"); err != nil {
		return nil, nil, fmt.Errorf("public listener: %w", err)
	}
	s.closers = append(s.closers, func() { pubLn.Close() })
	s.PublicURL = "http://" + pubLn.Addr().String()
	return loopLn, pubLn, nil
}

// proofHandler serves proof pages from the proof store, verified with this data dir's keys
// when both exist, with the driver's trace viewer when it is installed.
func proofHandler(cfg workers.Config, l *workers.ControlPlane) (http.Handler, error) {
	layout := cfg.Layout()
	opts := proofpage.Options{Index: l.Index}
	vk, verr := signing.LoadPublic(filepath.Join(layout.Keys, datadir.VerifierKeyFile))
	ck, cerr := signing.LoadPublic(filepath.Join(layout.Keys, datadir.ControlKeyFile))
	if verr == nil && cerr == nil {
		opts.VerifierKey, opts.ControlKey = vk, ck
	}
	pc := proofpage.Config{Root: layout.Proofs, Prefix: "/proofs/", IndexURL: "/", Options: opts,
		TraceViewerDir: proofpage.TraceViewerDir(verify.ConfigFrom(cfg.Settings.Browser).DriverDir)}
	h, err := proofpage.NewHandler(pc)
	if err != nil {
		pc.TraceViewerDir = "" // trace links then go to the raw files
		return proofpage.NewHandler(pc)
	}
	return h, nil
}

func (s *Stack) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener closed under us: Close is running
		}
	}()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}

// Close stops everything in reverse order.
func (s *Stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// publicHosts are the advertised names of the public listener: the configured ones and the
// host of the chat endpoint Agentverse forwards to.
func publicHosts(o Options) []string {
	hosts := slices.Clone(o.PublicHosts)
	if u, err := url.Parse(o.Chat.Endpoint); err == nil && u.Host != "" {
		hosts = append(hosts, u.Host)
	}
	return hosts
}

func listen(addr, def string) (net.Listener, error) {
	if addr == "" {
		addr = def
	}
	return net.Listen("tcp", addr)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
