// Package temporaltest starts the embedded Temporal server for tests: each call gets its own
// server on a fresh temp dir and free loopback ports, so tests may run in parallel. Server
// logs are kept in memory and printed only when the test fails. Everything it starts ends at
// the test's cleanup.
//
// Typical use:
//
//	srv := temporaltest.StartServer(t)
//	c := temporaltest.Dial(t, srv)
//	temporaltest.StartWorker(t, c, "tq", func(r worker.Registry) { r.RegisterWorkflow(W) })
//	run, err := c.ExecuteWorkflow(temporaltest.Context(t), client.StartWorkflowOptions{TaskQueue: "tq"}, W)
package temporaltest

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
	"github.com/signoff/signoff/temporal/embedded"
)

// Timeout bounds every context the package hands out: it only catches hangs.
const Timeout = 30 * time.Second

// Context ends with the test or after Timeout.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// Config is a server config for dir with free ports, the Web UI off and the server's logs
// kept in memory.
func Config(t testing.TB, dir string) embedded.Config {
	t.Helper()
	logs := &LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log for %s:\n%s", dir, logs.String())
		}
	})
	return embedded.Config{
		DataDir:      dir,
		FrontendPort: embedded.AnyPort,
		UIPort:       0,
		LogLevel:     "warn",
		LogOutput:    logs,
	}
}

// StartServer starts a server on a new temp dir; opts adjust its config (UIPort =
// embedded.AnyPort turns the Web UI on). It stops at cleanup.
func StartServer(t testing.TB, opts ...func(*embedded.Config)) *embedded.Server {
	t.Helper()
	cfg := Config(t, t.TempDir())
	for _, o := range opts {
		o(&cfg)
	}
	return StartServerWith(t, cfg)
}

// StartServerWith starts a server with cfg and stops it at cleanup. Stop is idempotent, so
// a test may also stop it earlier.
func StartServerWith(t testing.TB, cfg embedded.Config) *embedded.Server {
	t.Helper()
	if testing.Short() {
		// The unit tier (go test -short, `go tool task test:unit`) starts no server: a
		// test that needs one skips under -short.
		t.Fatalf("the unit tier (-short) starts no Temporal server; skip this test under -short")
	}
	srv, err := embedded.Start(Context(t), cfg)
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

// Dial connects a client to srv; it is closed at cleanup.
func Dial(t testing.TB, srv *embedded.Server) client.Client {
	t.Helper()
	c, err := temporal.Dial(Context(t), srv.DialConfig())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// StartWorker runs a worker on queue until cleanup. The returned stop lets a test stop it
// earlier; calling it again is harmless.
func StartWorker(t testing.TB, c client.Client, queue string, register func(worker.Registry)) (stop func()) {
	t.Helper()
	w := worker.New(c, queue, worker.Options{})
	register(w)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker on %s: %v", queue, err)
	}
	var once sync.Once
	stop = func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stop
}

// LogBuffer is a writer safe for the server's goroutines (and a stack's loggers). Fatal lines also go straight
// to stderr: the server exits right after them, before any cleanup could print the buffer.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bytes.Contains(p, []byte(`"level":"fatal"`)) {
		_, _ = os.Stderr.Write(p)
	}
	return b.buf.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
