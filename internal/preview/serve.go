package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/signoff/signoff/internal/sandbox"
)

// start launches `npm start` on a free loopback port inside the sandbox, puts Signoff's
// verification proxy in front of the forward to it, and waits until the app answers HTTP
// (any status: a missing SHA is the verifier's finding, not a start failure).
func (l *Launcher) start(ctx context.Context, ws *workspace, job *Job) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	extra := append(append(slices.Clip(job.env), "NODE_ENV=production", "PORT="+strconv.Itoa(port), "SIGNOFF_COMMIT_SHA="+job.SHA), job.sentryEnv()...)
	logPath := filepath.Join(ws.logs, "start.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("preview: start log: %w", err)
	}
	defer logFile.Close()
	pm, err := l.resolvePM(ctx, job.PackageManager, job.PackageManagerVersion, "")
	if err != nil {
		return err
	}
	ws.pmRoot = pm.root
	extra = append(append(extra, "npm_config_update_notifier=false"), pm.env()...)
	args := pm.start(port)
	begin := time.Now()
	p, err := spawn(l.sb, l.spec(ws, ws.src, l.env(ws, extra...), nil, logFile, sandbox.NetNone, args...), l.pidDir(), ws.id, "start")
	if err != nil {
		return err
	}
	job.Start = Step{Name: "start", Command: command(args), Log: logPath, Status: StatusFailed, ExitCode: -1}
	job.PID = p.sp.Pid()
	job.StartTicks, _ = startTicks(job.PID)
	// The app listens on its own loopback, in its own network namespace; the forward is the
	// one way in, and it leads to that port only.
	addr, unhook, err := p.sp.Forward(port)
	if err != nil {
		p.stop()
		return &StartError{Reason: "forward the app's port: " + err.Error(), Log: logPath}
	}
	p.unhook = unhook
	// Signoff's proxy stands in front of the forward: it states the built commit at
	// /__verification, so the app needs no route of its own.
	px, err := startProxy(addr, job.SHA, l.cfg.Listen, l.cfg.Advertise, l.cfg.FirstPort)
	if err != nil {
		p.stop()
		return &StartError{Reason: err.Error(), Log: logPath}
	}
	p.unhook = func() { px.Close(); unhook() }
	job.Port = port
	job.AppURL = "http://" + addr
	job.URL = px.URL()

	if err := waitReady(ctx, job.AppURL, p, l.cfg.StartTimeout); err != nil {
		job.Start.Duration = time.Since(begin)
		exited := p.exited()
		p.stop()
		if exited {
			job.Start.ExitCode = p.exitCode()
		}
		return &StartError{Reason: err.Error(), Log: logPath}
	}
	runtimeSHA, err := readVerification(ctx, px.localURL())
	job.Start.Duration = time.Since(begin)
	if err != nil {
		exited := p.exited()
		p.stop()
		if exited {
			job.Start.ExitCode = p.exitCode()
		}
		return &StartError{Reason: err.Error(), Log: logPath}
	}
	job.Start.Status, job.Start.ExitCode = StatusPassed, 0
	job.RuntimeSHA = runtimeSHA
	l.mu.Lock()
	l.running[job.ID] = p
	l.mu.Unlock()
	return nil
}

// waitReady waits until the app answers HTTP at all (any status: it may have no route at
// /__verification, and a missing SHA is the verifier's finding, not a start failure).
func waitReady(ctx context.Context, appURL string, p *proc, limit time.Duration) error {
	client := &http.Client{
		Timeout:       2 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	deadline := time.Now().Add(limit)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, appURL+VerificationPath, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case p.exited():
			return fmt.Errorf("exited before answering (%v)", p.err)
		case time.Now().After(deadline):
			return fmt.Errorf("no HTTP answer within %s", limit)
		}
		select {
		case <-ctx.Done():
		case <-p.done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readVerification is what the preview (through the proxy) states at /__verification:
// the commit, or "" when it states none.
func readVerification(ctx context.Context, base string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+VerificationPath, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", VerificationPath, err)
	}
	defer resp.Body.Close()
	var body verificationBody
	if resp.StatusCode == http.StatusOK {
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body)
	}
	return body.CommitSHA, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("preview: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
