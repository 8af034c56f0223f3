package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"

	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractclient"
)

// openServices opens the control queue's services (payment, deliverable) before its worker
// starts: Stripe or the local Stripe test double, GitHub or the local bare remote, from
// o.Settings. A process without the control queue opens none.
func openServices(ctx context.Context, s *Stack, o Options, log *slog.Logger) error {
	if !o.Control {
		return nil
	}
	hookURL := "" // headless: no public listener, so no webhooks; the workflow polls
	if s.PublicURL != "" {
		if hookURL = loopbackURL(s.PublicURL, log); hookURL != "" {
			hookURL += workers.StripeWebhookPath
		}
	}
	svc, err := workers.OpenServices(ctx, s.Config, workers.ServiceOptions{StripeWebhookURL: hookURL, Log: log})
	if err != nil {
		return err
	}
	s.Services = svc
	s.closers = append(s.closers, svc.Close)
	svc.Apply(s.ControlPlane)
	return nil
}

// mountServices mounts the services' webhooks on the public listener, points the loopback
// checkout at the local Stripe test double, and starts the local PR head watcher.
func mountServices(s *Stack, o Options) error {
	if s.Services == nil {
		return nil
	}
	hooks, err := s.Services.Webhooks(contractclient.NewSignals(s.Client))
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	for path, h := range hooks {
		s.PublicMux.Handle(path, h)
	}
	if s.Services.LocalStripe != nil {
		s.Loopback.CheckoutBase = s.Services.LocalStripe.URL()
	}
	s.closers = append(s.closers, s.Services.WatchHeads(contractclient.NewSignals(s.Client), s.ControlPlane))
	return nil
}

// loopbackURL is how the local test double (which posts only to loopback) reaches the public
// listener: the listener's own URL, or 127.0.0.1 at its port when it listens on every
// interface. A listener on a specific non-loopback address gets "" (no webhooks: the
// workflow polls).
func loopbackURL(public string, log *slog.Logger) string {
	u, err := url.Parse(public)
	if err != nil {
		return ""
	}
	ip := net.ParseIP(u.Hostname())
	switch {
	case ip != nil && ip.IsLoopback():
		return public
	case ip != nil && ip.IsUnspecified():
		return "http://" + net.JoinHostPort("127.0.0.1", u.Port())
	}
	log.Warn("public listener is not reachable on loopback: the local Stripe test double sends no webhooks; the workflow polls", "public", public)
	return ""
}
