package contract_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/contract"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
)

// approveClient answers the approve update with refusal (nil: taken) and the status query
// with st. Everything else of client.Client is unused by `contract approve`.
type approveClient struct {
	client.Client
	refusal *contractapi.ApprovalRefusal
	st      contractapi.Status
	updates int
	queries int
}

func (c *approveClient) Close() {}

func (c *approveClient) UpdateWorkflow(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	c.updates++
	return approveHandle{c.refusal}, nil
}

func (c *approveClient) QueryWorkflow(context.Context, string, string, string, ...interface{}) (converter.EncodedValue, error) {
	c.queries++
	return jsonValue{c.st}, nil
}

type approveHandle struct{ refusal *contractapi.ApprovalRefusal }

func (h approveHandle) WorkflowID() string { return "" }
func (h approveHandle) RunID() string      { return "" }
func (h approveHandle) UpdateID() string   { return "" }
func (h approveHandle) Get(_ context.Context, v interface{}) error {
	if h.refusal != nil {
		return temporal.NewApplicationErrorWithOptions(h.refusal.Reason, contractapi.ApprovalRefusedError,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*h.refusal}})
	}
	*v.(*contractapi.ApproveResult) = contractapi.ApproveResult{State: contracts.StateApproved}
	return nil
}

type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return true }
func (j jsonValue) Get(p any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, p)
}

// `contract approve` answers from the update at once: approved with the checkout link when
// the workflow has opened it, or refused with the workflow's reason and exit 1.
func TestApproveAnswersFromTheUpdate(t *testing.T) {
	hash := strings.Repeat("c", 64)
	run := func(cl *approveClient, json bool) (string, string, error) {
		io, out, errOut := iostreams.Test()
		f := &cmdutil.Factory{IO: io, Dial: func(context.Context) (client.Client, error) { return cl, nil }}
		err := contract.RunApprove(context.Background(), &contract.ApproveOptions{Factory: f, ID: "c-one", Hash: hash, As: "alice", JSON: json})
		return out.String(), errOut.String(), err
	}

	ok := &approveClient{st: contractapi.Status{ContractID: "c-one", State: contracts.StateApproved,
		Payment: capability.PaymentState{CheckoutURL: "http://127.0.0.1:1/checkout/cs"}}}
	out, _, err := run(ok, false)
	if err != nil || !strings.Contains(out, "Approved c-one (hash cccccccccccc)") || !strings.Contains(out, "http://127.0.0.1:1/checkout/cs") || ok.updates != 1 {
		t.Fatalf("approved: %v %q after %d updates", err, out, ok.updates)
	}

	no := &approveClient{refusal: &contractapi.ApprovalRefusal{Code: contractapi.RefusedWrongHash, Reason: "approval of hash cccccccccccc refused"}}
	_, errOut, err := run(no, false)
	if iostreams.ExitCode(err) != iostreams.ExitFailure || !strings.Contains(errOut, "refused: approval of hash cccccccccccc refused") || no.queries != 0 {
		t.Fatalf("refused: exit %d %q, %d status reads", iostreams.ExitCode(err), errOut, no.queries)
	}
	out, _, _ = run(no, true)
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["approved"] != false || got["code"] != contractapi.RefusedWrongHash {
		t.Fatalf("refused --json: %v %q", err, out)
	}
}

// The lifecycle commands read the Factory when they run: the root's --data-dir is parsed
// after the commands are built.
func TestLifecycleReadsTheFactoryWhenItRuns(t *testing.T) {
	io, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: io, Conn: &cmdutil.Conn{}, DataDir: ".signoff"}
	var got *contract.ApproveOptions
	cmd := contract.NewCmdApprove(f, func(o *contract.ApproveOptions) error { got = o; return nil })
	f.DataDir = "/d"
	cmd.SetArgs([]string{"c-one", strings.Repeat("c", 64), "--as", "alice"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Factory != f || got.DataDir != "/d" || got.ID != "c-one" || got.As != "alice" {
		t.Fatalf("options %+v", got)
	}
}

// `contract start` reads the configuration: a heartbeat timeout out of range stops it with
// exit 2, naming the variable, before it loads the file or dials the server.
func TestStartRefusesABadHeartbeatTimeout(t *testing.T) {
	for _, bad := range []string{"2s", "2h", "often"} {
		t.Setenv("SIGNOFF_HEARTBEAT_TIMEOUT", bad)
		io, _, _ := iostreams.Test()
		f := cmdutil.New(io)
		f.Dial = func(context.Context) (client.Client, error) {
			t.Error("dialled with a bad setting")
			return nil, context.Canceled
		}
		cmd := contract.NewCmdStart(f, nil)
		cmd.SetArgs([]string{"no-such-contract.json"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if iostreams.ExitCode(err) != 2 || !strings.Contains(err.Error(), "SIGNOFF_HEARTBEAT_TIMEOUT") || strings.Contains(err.Error(), "no-such-contract") {
			t.Errorf("%s: exit %d %v", bad, iostreams.ExitCode(err), err)
		}
	}
}
