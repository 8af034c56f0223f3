package basecheck_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// fakeServer is the part of a Temporal client a Choice and its Queued use: the queues'
// pollers, and the start of the check, which it records and refuses (nothing runs it).
type fakeServer struct {
	client.Client
	polled    bool
	describes int
	started   []client.StartWorkflowOptions
	closes    int
}

var errNotRun = errors.New("fake: the check is not run")

func (f *fakeServer) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	f.describes++
	resp := &workflowservice.DescribeTaskQueueResponse{}
	if f.polled {
		resp.Pollers = []*taskqueuepb.PollerInfo{{Identity: "worker"}}
	}
	return resp, nil
}

func (f *fakeServer) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	f.started = append(f.started, o)
	return nil, errNotRun
}

func (f *fakeServer) Close() { f.closes++ }

var errNoBrowser = errors.New("no browser on this machine")

func choiceContract() contracts.Contract {
	return contracts.Contract{ContractID: "c-choice", Repo: contracts.Repo{Owner: "acme", Name: "app", BaseCommitSHA: strings.Repeat("a", 40)},
		Criteria: []contracts.Criterion{{ID: "one"}, {ID: "two"}}}
}

// A Choice decides nothing until a check runs: a draft refused before its check never dials
// Temporal or builds a local checker.
func TestChoiceDecidesOnlyWhenACheckRuns(t *testing.T) {
	ch := &basecheck.Choice{Mode: basecheck.ModeAuto, Address: "127.0.0.1:1", DataDir: t.TempDir(), Source: &survey.Source{GitDir: t.TempDir()},
		Dial: func(context.Context) (client.Client, error) {
			t.Error("dialled without a check")
			return nil, errors.New("no")
		},
		Local: func() (*basecheck.Local, error) { t.Error("built without a check"); return nil, errNoBrowser }}
	if where, why := ch.Chosen(); where != "" || why != "" {
		t.Errorf("chosen before a check: %q %q", where, why)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
}

// In auto mode a server that cannot take the check sends it to this process, and the report
// says why; in queues mode the same reason is the error and nothing is built here.
func TestChoiceFallsBackOnlyInAutoMode(t *testing.T) {
	for name, c := range map[string]struct {
		address string
		server  bool // answers, with workers when polled
		polled  bool
		dialErr error
		source  bool
		reason  string
	}{
		"no address":       {reason: "no --temporal-address"},
		"no answer":        {address: "127.0.0.1:1", dialErr: errors.New("reach Temporal at 127.0.0.1:1: refused"), reason: "reach Temporal at 127.0.0.1:1: refused"},
		"no workers":       {address: "h:1", server: true, reason: "the Signoff server at h:1 cannot run the base check: no worker polls the signoff-control queue"},
		"foreign data dir": {address: "h:1", server: true, polled: true, source: true, reason: "is not the data dir of the Signoff server at h:1"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, mode := range []basecheck.Mode{basecheck.ModeAuto, basecheck.ModeQueues} {
				dials, builds := 0, 0
				var srv *fakeServer
				if c.server {
					srv = &fakeServer{polled: c.polled}
				}
				var progress bytes.Buffer
				ch := &basecheck.Choice{Mode: mode, Address: c.address, DataDir: t.TempDir(), Progress: &progress,
					Dial: func(context.Context) (client.Client, error) {
						dials++
						if c.dialErr != nil {
							return nil, c.dialErr
						}
						return srv, nil
					},
					Local: func() (*basecheck.Local, error) { builds++; return nil, errNoBrowser }}
				if c.source {
					ch.Source = &survey.Source{GitDir: t.TempDir()}
				}
				_, err := ch.CheckBase(context.Background(), choiceContract())
				where, why := ch.Chosen()
				if c.address == "" && dials != 0 {
					t.Errorf("%s: dialled without an address", mode)
				}
				if srv != nil && srv.closes != 1 {
					t.Errorf("%s: the refused server's client closed %d times", mode, srv.closes)
				}
				if srv != nil && len(srv.started) != 0 {
					t.Errorf("%s: a check started on a refused server", mode)
				}
				if mode == basecheck.ModeQueues {
					if err == nil || !strings.Contains(err.Error(), c.reason) || builds != 0 || where != "" || progress.Len() != 0 {
						t.Errorf("queues: err %v, %d builds, where %q, progress %q", err, builds, where, progress.String())
					}
					continue
				}
				if !errors.Is(err, errNoBrowser) || builds != 1 || where != authoring.WhereLocal || !strings.HasPrefix(why, "checked in this process, not on the queues: ") ||
					!strings.Contains(why, c.reason) {
					t.Errorf("auto: err %v, %d builds, chosen %q %q", err, builds, where, why)
				}
				if want := "Running 2 criteria on base commit aaaaaaaaaaaa in this process (build + browser)...\n"; progress.String() != want {
					t.Errorf("auto: progress %q, want %q", progress.String(), want)
				}
				// The choice and a failure to build stand: a second check neither dials nor builds again.
				_, _ = ch.CheckBase(context.Background(), choiceContract())
				if builds != 1 || (c.address != "" && dials != 1) {
					t.Errorf("auto: a second check built %d and dialled %d times", builds, dials)
				}
				_ = ch.Close()
			}
		})
	}
}

// Local mode never reaches for Temporal, whatever the address.
func TestChoiceLocalNeverDials(t *testing.T) {
	ch := &basecheck.Choice{Mode: basecheck.ModeLocal, Address: "h:1",
		Dial: func(context.Context) (client.Client, error) {
			t.Error("dialled in local mode")
			return nil, errors.New("no")
		},
		Local: func() (*basecheck.Local, error) { return nil, errNoBrowser }}
	if _, err := ch.CheckBase(context.Background(), choiceContract()); !errors.Is(err, errNoBrowser) {
		t.Fatalf("err %v", err)
	}
	if where, why := ch.Chosen(); where != authoring.WhereLocal || why != "" {
		t.Fatalf("chosen %q %q", where, why)
	}
}

// With nothing to register (no Source, no Register) the data dir is not the server's
// business: the check goes to the queues, and Close closes the client it dialled.
func TestChoiceQueuesWithNothingToRegister(t *testing.T) {
	srv := &fakeServer{polled: true}
	var progress bytes.Buffer
	ch := &basecheck.Choice{Address: "h:1", DataDir: t.TempDir(), Progress: &progress,
		Dial:  func(context.Context) (client.Client, error) { return srv, nil },
		Local: func() (*basecheck.Local, error) { t.Error("built a local checker"); return nil, errNoBrowser }}
	if _, err := ch.CheckBase(context.Background(), choiceContract()); !errors.Is(err, errNotRun) || len(srv.started) != 1 {
		t.Fatalf("err %v, %d started", err, len(srv.started))
	}
	if where, why := ch.Chosen(); where != authoring.WhereQueues || why != "" {
		t.Fatalf("chosen %q %q", where, why)
	}
	if want := "through the execute and verify queues at h:1 (build + browser)"; !strings.Contains(progress.String(), want) {
		t.Errorf("progress %q lacks %q", progress.String(), want)
	}
	if srv.closes != 0 {
		t.Fatal("closed before Close")
	}
	_ = ch.Close()
	if srv.closes != 1 {
		t.Fatalf("Close closed the client %d times", srv.closes)
	}
}

// A Client the caller runs the workers of is used as is: not probed, not closed, and checks
// keyed through WithKey get the keyed workflow id.
func TestChoiceUsesTheCallersClient(t *testing.T) {
	srv := &fakeServer{}
	ch := &basecheck.Choice{Mode: basecheck.ModeQueues, Client: srv}
	keyed := ch.WithKey("task-1")
	for i := 0; i < 2; i++ {
		if _, err := keyed.CheckBase(context.Background(), choiceContract()); !errors.Is(err, errNotRun) {
			t.Fatalf("err %v", err)
		}
	}
	if _, err := ch.CheckBase(context.Background(), choiceContract()); !errors.Is(err, errNotRun) {
		t.Fatalf("err %v", err)
	}
	if srv.describes != 0 {
		t.Errorf("the caller's client was probed %d times", srv.describes)
	}
	if len(srv.started) != 3 || srv.started[0].ID != srv.started[1].ID || srv.started[2].ID == srv.started[0].ID ||
		srv.started[0].WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Errorf("started %+v", srv.started)
	}
	_ = ch.Close()
	if srv.closes != 0 {
		t.Errorf("the caller's client was closed")
	}
}
