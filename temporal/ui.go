package temporal

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiopts "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiServer is the Temporal Web UI, served in-process from the assets embedded
// in the ui-server module (no Node, no network).
type uiServer struct {
	srv  *uiserver.Server
	done chan error
}

// startUI serves the UI on host:port and waits until it accepts connections.
// The port must have been checked: ui-server exits the process on a bind error.
func startUI(ctx context.Context, host string, port int, frontend, namespace string) (u *uiServer, err error) {
	defer func() {
		// NewServer panics on a bad config; turn that into an error.
		if r := recover(); r != nil {
			err = fmt.Errorf("temporal: web UI: %v", r)
		}
	}()
	srv := uiserver.NewServer(uiopts.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: frontend,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		// Plain HTTP on loopback: a Secure CSRF cookie would never be sent back.
		CORS:             uiconfig.CORS{CookieInsecure: true},
		HideLogs:         true,
		DisableNewsFetch: true,
	}))
	u = &uiServer{srv: srv, done: make(chan error, 1)}
	go func() { u.done <- srv.Start() }()

	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if err := waitListening(ctx, addr, u.done, 10*time.Second); err != nil {
		u.stop()
		return nil, fmt.Errorf("temporal: web UI on %s: %w", addr, err)
	}
	return u, nil
}

func (u *uiServer) stop() { u.srv.Stop() }

// waitListening polls addr until it accepts a TCP connection, the server exits,
// the context ends or the timeout passes.
func waitListening(ctx context.Context, addr string, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case e := <-exited:
			return fmt.Errorf("server exited: %v", e)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after %s: %w", timeout, err)
		}
	}
}
