package embedded_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/temporal/temporaltest"
)

func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, greetActivity, name).Get(ctx, &out)
	return out, err
}

func greetActivity(_ context.Context, name string) (string, error) {
	return "hello, " + name, nil
}

func registerGreet(r worker.Registry) {
	r.RegisterWorkflow(greetWorkflow)
	r.RegisterActivity(greetActivity)
}

func retentionOf(t *testing.T, srv *embedded.Server) time.Duration {
	t.Helper()
	opts, err := temporal.ClientOptions(srv.DialConfig())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := client.NewNamespaceClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	desc, err := nc.Describe(temporaltest.Context(t), srv.Namespace())
	if err != nil {
		t.Fatalf("describe namespace %s: %v", srv.Namespace(), err)
	}
	return desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
}

// History must survive a restart on the same data dir (new ports, too), and a
// changed retention must reach the existing namespace.
func TestRestartKeepsHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	dir := t.TempDir()
	cfg := temporaltest.Config(t, dir)
	cfg.Namespace = "signoff-test"
	cfg.RetentionDays = 7

	t0 := time.Now()
	srv := temporaltest.StartServerWith(t, cfg)
	startFresh := time.Since(t0)
	if srv.UIURL() != "" {
		t.Fatalf("UIURL = %q with UIPort 0", srv.UIURL())
	}
	if got, want := retentionOf(t, srv), 7*24*time.Hour; got != want {
		t.Fatalf("retention after first start = %v, want %v", got, want)
	}

	c, err := temporal.Dial(temporaltest.Context(t), srv.DialConfig())
	if err != nil {
		t.Fatal(err)
	}
	stopWorker := temporaltest.StartWorker(t, c, "greet", registerGreet)
	t1 := time.Now()
	run, err := c.ExecuteWorkflow(temporaltest.Context(t), client.StartWorkflowOptions{ID: "restart-1", TaskQueue: "greet"}, greetWorkflow, "ada")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := run.Get(temporaltest.Context(t), &got); err != nil {
		t.Fatal(err)
	}
	firstRun := time.Since(t1)
	if got != "hello, ada" {
		t.Fatalf("workflow result = %q", got)
	}
	runID := run.GetRunID()
	rss := rssMB()

	stopWorker()
	c.Close()
	t2 := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	stopTime := time.Since(t2)

	cfg.RetentionDays = 3
	t3 := time.Now()
	srv2 := temporaltest.StartServerWith(t, cfg)
	startExisting := time.Since(t3)
	if srv2.FrontendAddress() == srv.FrontendAddress() {
		t.Logf("note: restart got the same frontend port %s", srv2.FrontendAddress())
	}
	c2 := temporaltest.Dial(t, srv2)
	desc, err := c2.DescribeWorkflowExecution(temporaltest.Context(t), "restart-1", runID)
	if err != nil {
		t.Fatalf("describe workflow after restart: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("status after restart = %v, want COMPLETED", st)
	}
	// The result comes from the stored history, not from visibility.
	var again string
	if err := c2.GetWorkflow(temporaltest.Context(t), "restart-1", runID).Get(temporaltest.Context(t), &again); err != nil || again != "hello, ada" {
		t.Fatalf("result after restart = %q, %v", again, err)
	}
	if got, want := retentionOf(t, srv2), 3*24*time.Hour; got != want {
		t.Fatalf("retention after restart with 3 days = %v, want %v", got, want)
	}
	fi, err := os.Stat(filepath.Join(dir, embedded.DBFileName))
	if err != nil {
		t.Fatalf("database file: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("database mode = %o, want 600", perm)
	}
	t.Logf("start (fresh db) %v; first workflow %v; stop %v; start (existing db) %v; RSS after first workflow %s",
		startFresh.Round(time.Millisecond), firstRun.Round(time.Millisecond), stopTime.Round(time.Millisecond),
		startExisting.Round(time.Millisecond), rss)
}

func TestSecondStartOnSameDirIsLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	cfg := temporaltest.Config(t, t.TempDir())
	srv := temporaltest.StartServerWith(t, cfg)

	second, err := embedded.Start(temporaltest.Context(t), cfg) // AnyPort: different ports
	if err == nil {
		_ = second.Stop()
		t.Fatal("second Start on the same data dir succeeded")
	}
	if !errors.Is(err, embedded.ErrDataDirLocked) {
		t.Fatalf("error = %v, want ErrDataDirLocked", err)
	}
	if want := fmt.Sprintf("pid %d", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder (%s)", err, want)
	}
	// The first server is unharmed.
	if srv.Namespace() != temporal.DefaultNamespace {
		t.Fatalf("namespace = %q", srv.Namespace())
	}
	if got := retentionOf(t, srv); got != embedded.DefaultRetentionDays*24*time.Hour {
		t.Fatalf("first server retention = %v", got)
	}
}

func TestPortInUseIsAnErrorNotAnExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()

	cases := []struct {
		what     string
		frontend int
		ui       int
		hint     string
	}{
		{"frontend", port, 0, "--temporal-port"},
		{"UI", embedded.AnyPort, port, "--ui-port"},
	}
	for _, tc := range cases {
		cfg := temporaltest.Config(t, dir)
		cfg.FrontendPort, cfg.UIPort = tc.frontend, tc.ui
		srv, err := embedded.Start(temporaltest.Context(t), cfg)
		if err == nil {
			_ = srv.Stop()
			t.Fatalf("%s: Start succeeded on a taken port", tc.what)
		}
		var pe *embedded.PortInUseError
		if !errors.As(err, &pe) || pe.What != tc.what || pe.Port != port {
			t.Fatalf("%s: error = %#v (%v), want PortInUseError for port %d", tc.what, err, err, port)
		}
		msg := err.Error()
		if want := fmt.Sprintf("port %d on 127.0.0.1 is in use", port); !strings.Contains(msg, want) || !strings.Contains(msg, tc.hint) {
			t.Fatalf("%s: message %q lacks %q or %q", tc.what, msg, want, tc.hint)
		}
	}
	// A failed start leaves no database behind and releases the data dir.
	if _, err := os.Stat(filepath.Join(dir, embedded.DBFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("database after failed starts: %v", err)
	}
	busy.Close()
	cfg := temporaltest.Config(t, dir)
	cfg.FrontendPort = port
	srv := temporaltest.StartServerWith(t, cfg)
	if want := fmt.Sprintf("127.0.0.1:%d", port); srv.FrontendAddress() != want {
		t.Fatalf("frontend = %s, want %s", srv.FrontendAddress(), want)
	}
}

func TestWebUIListsWorkflows(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t, func(c *embedded.Config) { c.UIPort = embedded.AnyPort })
	if srv.UIURL() == "" {
		t.Fatal("UIURL empty with the UI on")
	}
	// Default retention is ours, not the server's 24 h.
	if got, want := retentionOf(t, srv), 30*24*time.Hour; got != want {
		t.Fatalf("default retention = %v, want %v", got, want)
	}

	res, body := httpGet(t, srv.UIURL()+"/")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !strings.Contains(strings.ToLower(body), "<html") {
		t.Fatalf("GET / body is not the UI page: %.200s", body)
	}

	c := temporaltest.Dial(t, srv)
	// No worker: the workflow stays running, which is all the list needs.
	run, err := c.ExecuteWorkflow(temporaltest.Context(t), client.StartWorkflowOptions{ID: "ui-list-1", TaskQueue: "nobody"}, greetWorkflow, "x")
	if err != nil {
		t.Fatal(err)
	}

	url := srv.UIURL() + "/api/v1/namespaces/" + srv.Namespace() + "/workflows"
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, body := httpGet(t, url)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d: %.300s", url, res.StatusCode, body)
		}
		var list struct {
			Executions []struct {
				Execution struct {
					WorkflowID string `json:"workflowId"`
					RunID      string `json:"runId"`
				} `json:"execution"`
			} `json:"executions"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("workflow list is not JSON: %v: %.300s", err, body)
		}
		for _, e := range list.Executions {
			if e.Execution.WorkflowID == "ui-list-1" && e.Execution.RunID == run.GetRunID() {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow ui-list-1 not listed by the UI API: %.500s", body)
		}
		// Visibility is written asynchronously; poll the condition.
		select {
		case <-temporaltest.Context(t).Done():
			t.Fatal("context ended")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func httpGet(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(temporaltest.Context(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return res, string(b)
}

// rssMB reads this process's resident set size, or "?" off Linux.
func rssMB() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
