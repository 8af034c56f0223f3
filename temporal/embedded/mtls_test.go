package embedded_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/temporaltest"
)

const (
	approveUpdate  = "approve"
	nobodyProbeEnv = "SIGNOFF_TEST_NOBODY_PROBE" // "ports;frontend;workflow id;key file"
	nobodyUID      = 65534
)

// approvalWorkflow waits for one approve update, as a contract waits for its requester's.
func approvalWorkflow(ctx workflow.Context) error {
	approved := false
	if err := workflow.SetUpdateHandler(ctx, approveUpdate, func(workflow.Context) error { approved = true; return nil }); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return approved })
}

// Another local account (uid nobody) can reach every port the embedded server listens on, but
// gets no call through any of them: not plain gRPC, not TLS without the client certificate,
// and it cannot read the certificate's key. The contract it tries to approve stays unapproved
// until the owner's client, holding the key, approves it.
func TestOnlyTheClientCertificateGetsIn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	if os.Geteuid() != 0 {
		t.Skip("runs a probe as uid nobody, which needs root")
	}
	dir := t.TempDir()
	srv := temporaltest.StartServerWith(t, temporaltest.Config(t, dir))
	c := temporaltest.Dial(t, srv)
	temporaltest.StartWorker(t, c, "mtls", func(r worker.Registry) { r.RegisterWorkflow(approvalWorkflow) })
	ctx := temporaltest.Context(t)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "approve-me", TaskQueue: "mtls"}, approvalWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	// Whether an approval landed is read from the history: no worker has to answer for it.
	approved := func() bool {
		t.Helper()
		it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatalf("read history: %v", err)
			}
			if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
				return true
			}
		}
		return false
	}

	ports := listeningPorts(t)
	_, frontPort, _ := net.SplitHostPort(srv.FrontendAddress())
	if len(ports) < 4 {
		t.Fatalf("want the frontend and the internal services among this process's listeners, got %v", ports)
	}
	probe := nobodyBinary(t)
	cmd := exec.CommandContext(ctx, probe, "-test.run=^TestNobodyProbe$", "-test.v")
	cmd.Env = append(os.Environ(), nobodyProbeEnv+"="+strings.Join([]string{strings.Join(ports, ","), frontPort, run.GetID(),
		srv.DialConfig().TLS.ClientKeyFile}, ";"))
	cmd.Dir = filepath.Dir(probe)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
	out, err := cmd.CombinedOutput()
	t.Logf("probe as uid %d:\n%s", nobodyUID, out)
	if err != nil {
		t.Fatalf("the probe failed: %v", err)
	}
	text := string(out)
	if strings.Contains(text, "GOT IN") {
		t.Fatal("uid nobody got a call through (see GOT IN above)")
	}
	if want := 2*len(ports) + 3; strings.Count(text, "REFUSED") != want {
		t.Fatalf("want %d refusals (two per port, the key, two approvals), got %d", want, strings.Count(text, "REFUSED"))
	}
	if approved() {
		t.Fatal("uid nobody approved the workflow")
	}

	// The owner's client, with the key, does what nobody could.
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), UpdateName: approveUpdate,
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil || !approved() {
		t.Fatalf("the owner's approval did not land: %v", err)
	}
}

// nobodyBinary is a copy of this test binary that uid nobody may run.
func nobodyBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "nobody-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, "probe")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestNobodyProbe runs only as TestOnlyTheClientCertificateGetsIn's child: it prints one
// REFUSED or GOT IN line per attempt.
func TestNobodyProbe(t *testing.T) {
	spec := os.Getenv(nobodyProbeEnv)
	if spec == "" {
		t.Skip("run by TestOnlyTheClientCertificateGetsIn as uid nobody")
	}
	parts := strings.Split(spec, ";")
	if len(parts) != 4 {
		t.Fatalf("bad probe spec %q", spec)
	}
	ports, front, workflowID, key := strings.Split(parts[0], ","), parts[1], parts[2], parts[3]
	report := func(what string, in bool, err error) {
		if in {
			fmt.Printf("GOT IN %s\n", what)
			return
		}
		fmt.Printf("REFUSED %s: %v\n", what, err)
	}
	// A certificate-less TLS client that would accept any server: only the server's demand
	// for a client certificate stops it.
	noCert := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	for _, p := range ports {
		addr := net.JoinHostPort("127.0.0.1", p)
		for _, c := range []struct {
			name  string
			creds credentials.TransportCredentials
		}{{"plain", insecure.NewCredentials()}, {"tls-without-cert", credentials.NewTLS(noCert)}} {
			in, err := healthCheck(addr, c.creds)
			report(fmt.Sprintf("port %s %s", p, c.name), in, err)
		}
	}
	if _, err := os.ReadFile(key); err != nil {
		report("reading the client key", false, err)
	} else {
		report("reading the client key", true, nil)
	}
	for _, c := range []struct {
		name  string
		creds credentials.TransportCredentials
	}{{"plain", insecure.NewCredentials()}, {"tls-without-cert", credentials.NewTLS(noCert)}} {
		err := approveAs(net.JoinHostPort("127.0.0.1", front), workflowID, c.creds)
		report("approve "+c.name, err == nil, err)
	}
}

// healthCheck asks addr for its gRPC health: any answer from a gRPC server, even "not
// implemented", means the connection carried a call; only a transport failure is a refusal.
func healthCheck(addr string, creds credentials.TransportCredentials) (bool, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return false, err
	}
	defer conn.Close()
	// Against hangs only: a refusal comes at the handshake.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		return true, nil
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unavailable && s.Code() != codes.DeadlineExceeded {
		return true, err
	}
	return false, err
}

// approveAs sends the approve update straight to the frontend's gRPC API (no SDK retries, so
// a refusal comes back at once).
func approveAs(addr, workflowID string, creds credentials.TransportCredentials) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = workflowservice.NewWorkflowServiceClient(conn).UpdateWorkflowExecution(ctx, &workflowservice.UpdateWorkflowExecutionRequest{
		Namespace:         temporal.DefaultNamespace,
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: workflowID},
		WaitPolicy:        &updatepb.WaitPolicy{LifecycleStage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED},
		Request: &updatepb.Request{Meta: &updatepb.Meta{UpdateId: "nobody", Identity: "nobody"},
			Input: &updatepb.Input{Name: approveUpdate}},
	})
	return err
}
