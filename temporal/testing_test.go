package temporal_test

// Shared helpers for every server-backed test of the project. All such tests
// live in this package so that only one ~170 MB test binary links the server.
// Each test gets its own server on a fresh temp dir and free loopback ports,
// so tests may call t.Parallel.
//
// Typical use:
//
//	srv := startTestServer(t)                     // stopped by t.Cleanup
//	c := dialTest(t, srv)                         // closed by t.Cleanup
//	startTestWorker(t, c, "tq", func(r worker.Registry) { r.RegisterWorkflow(W) })
//	run, err := c.ExecuteWorkflow(testCtx(t), client.StartWorkflowOptions{TaskQueue: "tq"}, W)

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/signoff/signoff/temporal"
)

// testTimeout bounds every context a test helper hands out.
const testTimeout = 30 * time.Second

// testCtx is a context that ends with the test or after testTimeout.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// testConfig is a config for dir with free ports, the UI off and server logs
// kept in memory (printed only if the test fails).
func testConfig(t testing.TB, dir string) temporal.Config {
	t.Helper()
	logs := &logBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log for %s:\n%s", dir, logs.String())
		}
	})
	return temporal.Config{
		DataDir:      dir,
		FrontendPort: temporal.AnyPort,
		UIPort:       0,
		LogLevel:     "warn",
		LogOutput:    logs,
	}
}

// startTestServer starts a server on a new temp dir. Options adjust the config
// (set UIPort to temporal.AnyPort for the Web UI). The server stops at cleanup.
func startTestServer(t testing.TB, opts ...func(*temporal.Config)) *temporal.Server {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	for _, o := range opts {
		o(&cfg)
	}
	return startTestServerWith(t, cfg)
}

// startTestServerWith starts a server with cfg and stops it at cleanup (Stop is
// idempotent, so a test may also stop it earlier).
func startTestServerWith(t testing.TB, cfg temporal.Config) *temporal.Server {
	t.Helper()
	srv, err := temporal.Start(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("start embedded temporal: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop embedded temporal: %v", err)
		}
	})
	return srv
}

// dialTest connects a client to srv; it is closed at cleanup.
func dialTest(t testing.TB, srv *temporal.Server) client.Client {
	t.Helper()
	c, err := temporal.Dial(testCtx(t), srv.DialConfig())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// startTestWorker runs a worker on taskQueue until cleanup. The returned stop
// lets a test stop it earlier; calling it again is harmless.
func startTestWorker(t testing.TB, c client.Client, taskQueue string, register func(worker.Registry)) (stop func()) {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{})
	register(w)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker on %s: %v", taskQueue, err)
	}
	var once sync.Once
	stop = func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stop
}

// logBuffer collects server log lines from the server's goroutines. Fatal
// lines also go straight to stderr: the server exits right after them, before
// any cleanup could print the buffer.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bytes.Contains(p, []byte(`"level":"fatal"`)) {
		_, _ = os.Stderr.Write(p)
	}
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
