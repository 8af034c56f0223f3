package contract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/activities/index"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows"
)

// Deps are what the lifecycle commands need from outside: streams, Temporal, the data dir.
type Deps struct {
	IO      *iostreams.IO
	Conn    *cmdutil.Conn
	DataDir *string
	// Dial overrides how a client is made (tests).
	Dial func(ctx context.Context) (client.Client, error)
}

func (d *Deps) dial(ctx context.Context) (client.Client, error) {
	if d.Dial != nil {
		return d.Dial(ctx)
	}
	c, err := d.Conn.Dial(ctx)
	if err != nil {
		return nil, iostreams.Failed(err)
	}
	return c, nil
}

// Trust reads what the deployment's verify worker published: its public key and digest.
func Trust(dataDir string) (workflows.Trust, error) { return workers.ReadTrust(dataDir) }

// StartOptions are the inputs of `contract start`.
type StartOptions struct {
	*Deps
	File      string
	Requester string
	CheckBase bool
	// Quote is the quote file ("" looks beside FILE; "none" starts without one).
	Quote string
	JSON  bool
}

// NewCmdStart builds `contract start FILE`.
func NewCmdStart(d *Deps, runF func(*StartOptions) error) *cobra.Command {
	o := &StartOptions{Deps: d}
	cmd := &cobra.Command{
		Use:   "start FILE",
		Short: "Quote a contract: start its workflow and print the hash to approve",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunStart(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Requester, "requester", defaultRequester(), "who asks; only they may approve")
	cmd.Flags().BoolVar(&o.CheckBase, "check-base", false, "run the criteria on the base commit first; refuse a vacuous contract; record the result")
	cmd.Flags().StringVar(&o.Quote, "quote", "", "quote file from `contract new` (default: FILE's .quote.json if present; none: start unquoted)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

func defaultRequester() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "cli"
}

// RunStart loads the contract and starts its workflow in state quoted.
func RunStart(ctx context.Context, o *StartOptions) error {
	c, err := LoadFile(o.IO, o.File, o.JSON, contracts.LoadOptions{})
	if err != nil {
		return err
	}
	q, err := contracts.NewQuote(*c, o.Requester)
	if err != nil {
		return iostreams.Failed(err)
	}
	qf, err := startQuote(o, q.Hash)
	if err != nil {
		return err
	}
	trust, err := Trust(*o.DataDir)
	if err != nil {
		return iostreams.Failed(err)
	}
	var disc *workflows.Discrimination
	if o.CheckBase {
		// Through the queues of the cluster the contract will run on.
		d, _, derr, err := checkBase(ctx, &CheckOptions{IO: o.IO, Conn: *o.Conn, DataDir: *o.DataDir}, c)
		if err != nil {
			return err
		}
		if derr != nil {
			return iostreams.Failed(fmt.Errorf("not quoted: %w", derr))
		}
		disc = workflows.DiscriminationOf(&d)
	}
	in := workflows.ContractInput{Quote: q, Channel: "cli", Trust: trust, Discrimination: disc}
	if qf != nil {
		in.QuoteExpiresAt = qf.Quote.ExpiresAt
		if bc := qf.BaseCheck; disc == nil && bc != nil && bc.BaseSHA == c.Repo.BaseCommitSHA {
			in.Discrimination = bc
		}
	}
	cl, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(c.ContractID), TaskQueue: workflows.ControlQueue,
		WorkflowExecutionErrorWhenAlreadyStarted: true}, workflows.ContractWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return iostreams.BadInput(fmt.Errorf("contract %s already has a workflow; a changed quote needs a new contract id or version", c.ContractID))
	}
	if err != nil {
		return iostreams.Failed(fmt.Errorf("start workflow: %w", err))
	}
	if o.JSON {
		out := map[string]any{"contract_id": c.ContractID, "contract_hash": q.Hash, "state": workflows.StateQuoted,
			"requester": o.Requester, "workflow_id": workflows.WorkflowID(c.ContractID)}
		if qf != nil {
			out["quote_expires_at"] = qf.Quote.ExpiresAt
		}
		return o.IO.WriteJSON(out)
	}
	o.IO.Printf("Quoted %s: %d criteria, fixed price %s, max %d attempts.\n", c.ContractID, len(c.Criteria), FormatPrice(c.Price), c.MaxAttempts)
	o.IO.Printf("Contract hash: %s\n", q.Hash)
	if qf != nil {
		o.IO.Printf("The quote stands until %s; the contract expires unapproved after that.\n", qf.Quote.ExpiresAt.Format(time.RFC3339))
	}
	o.IO.Printf("Approve exactly this hash with:\n  signoff contract approve %s %s\n", c.ContractID, q.Hash)
	return nil
}

// startQuote finds and checks the contract's quote file: one that expired, or was made for
// another contract or requester, is refused before any workflow starts.
func startQuote(o *StartOptions, hash string) (*QuoteFile, error) {
	if o.Quote == "none" {
		return nil, nil
	}
	path := o.Quote
	if path == "" {
		path = QuotePath(o.File)
	}
	qf, err := LoadQuote(path)
	if err != nil {
		return nil, iostreams.BadInput(err)
	}
	if qf == nil {
		if o.Quote != "" {
			return nil, iostreams.BadInput(fmt.Errorf("no quote file at %s", path))
		}
		return nil, nil
	}
	if err := qf.Check(path, hash, o.Requester, time.Now()); err != nil {
		return nil, iostreams.BadInput(err)
	}
	return qf, nil
}

// ApproveOptions are the inputs of `contract approve`.
type ApproveOptions struct {
	*Deps
	ID, Hash, As, MessageID string
	JSON                    bool
}

// NewCmdApprove builds `contract approve ID HASH`.
func NewCmdApprove(d *Deps, runF func(*ApproveOptions) error) *cobra.Command {
	o := &ApproveOptions{Deps: d}
	cmd := &cobra.Command{
		Use:   "approve ID HASH",
		Short: "Approve a quoted contract by the hash you were shown",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID, o.Hash = args[0], args[1]
			if runF != nil {
				return runF(o)
			}
			return RunApprove(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.As, "as", defaultRequester(), "approver identity (must be the requester)")
	cmd.Flags().StringVar(&o.MessageID, "message-id", "", "id of the approving message (default: random)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

// RunApprove signals the approval and reports whether the workflow took it.
func RunApprove(ctx context.Context, o *ApproveOptions) error {
	if len(o.Hash) != 64 {
		return iostreams.BadInput(fmt.Errorf("HASH must be the 64-character contract hash you were shown"))
	}
	if o.MessageID == "" {
		o.MessageID = randomID()
	}
	cl, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	before, err := queryStatus(ctx, cl, o.ID)
	if err != nil {
		return err
	}
	err = cl.SignalWorkflow(ctx, workflows.WorkflowID(o.ID), "", workflows.SignalApprove,
		workflows.Approve{Hash: o.Hash, Approver: o.As, Channel: "cli", MessageID: o.MessageID})
	if err != nil {
		return iostreams.Failed(fmt.Errorf("signal approval: %w", err))
	}
	// The signal is asynchronous: read back whether it was taken or refused.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := queryStatus(ctx, cl, o.ID)
		if err != nil {
			return err
		}
		if len(st.Refusals) > len(before.Refusals) || st.StrangerRefusals > before.StrangerRefusals {
			why := "only the requester " + strconv.Quote(st.Requester) + " may approve" // counted, not recorded again
			if len(st.Refusals) > len(before.Refusals) {
				why = st.Refusals[len(st.Refusals)-1]
			}
			if o.JSON {
				_ = o.IO.WriteJSON(map[string]any{"approved": false, "reason": why})
			} else {
				fmt.Fprintln(o.IO.ErrOut, "refused:", why)
			}
			return iostreams.SilentExit(iostreams.ExitFailure)
		}
		if st.State != workflows.StateQuoted {
			if o.JSON {
				return o.IO.WriteJSON(map[string]any{"approved": true, "state": st.State, "checkout_url": st.Payment.CheckoutURL})
			}
			o.IO.Printf("Approved %s (hash %s).\n", o.ID, o.Hash[:12])
			if st.Payment.CheckoutURL != "" {
				o.IO.Printf("Authorize the payment (captured only if satisfied): %s\n", st.Payment.CheckoutURL)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond) // polling a query, not synchronising a test
	}
	return iostreams.Failed(errors.New("the workflow did not take the approval within 10 s; see `signoff contract status`"))
}

// SimpleOptions are the inputs of cancel, status and watch.
type SimpleOptions struct {
	*Deps
	ID   string
	JSON bool
}

// NewCmdCancel builds `contract cancel ID`.
func NewCmdCancel(d *Deps, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Deps: d}
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a contract; an authorization is cancelled, never captured",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(o)
			}
			cl, err := o.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := cl.SignalWorkflow(cmd.Context(), workflows.WorkflowID(o.ID), "", workflows.SignalCancel,
				workflows.Cancel{By: defaultRequester(), Reason: "cancelled from the CLI"}); err != nil {
				return iostreams.Failed(notFound(o.ID, err))
			}
			o.IO.Printf("Cancel requested for %s.\n", o.ID)
			return nil
		},
	}
	return cmd
}

// NewCmdStatus builds `contract status ID`.
func NewCmdStatus(d *Deps, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Deps: d}
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a contract's state, verdicts, payment and PR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunStatus(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

// RunStatus queries the workflow, or the index when its history is gone.
func RunStatus(ctx context.Context, o *SimpleOptions) error {
	cl, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	st, err := queryStatus(ctx, cl, o.ID)
	if err != nil {
		e, ok, ierr := index.Open(workers.Paths(*o.DataDir).Index).Get(o.ID)
		if ierr != nil || !ok {
			return err
		}
		if o.JSON {
			return o.IO.WriteJSON(e)
		}
		o.IO.Printf("%s: %s (from the index; workflow history is past retention)\n  verdict %s, %d attempt(s), proof %s\n",
			e.ContractID, e.State, e.Verdict, e.Attempts, e.ProofDir)
		return nil
	}
	if o.JSON {
		return o.IO.WriteJSON(st)
	}
	PrintStatus(o.IO, st)
	return nil
}

// PrintStatus renders a status for people.
func PrintStatus(io *iostreams.IO, st workflows.Status) {
	io.Printf("%s  %s\n", st.ContractID, st.State)
	io.Printf("  goal: %s\n  hash: %s\n", st.Goal, st.ContractHash)
	if (st.State == workflows.StateQuoted || st.State == workflows.StateExpired) && !st.QuoteExpiresAt.IsZero() {
		io.Printf("  quote open until: %s\n", st.QuoteExpiresAt.UTC().Format(time.RFC3339))
	}
	for _, e := range st.Timeline {
		if e.Type == "discrimination" {
			io.Printf("  base check (%s): fails on base %s; regression guards %s\n", orDash(e.Data["checked_on"]), orDash(e.Data["failing_on_base"]), orDash(e.Data["regression_guards"]))
		}
	}
	if st.Verdict != "" {
		io.Printf("  verdict: %s\n", st.Verdict)
	}
	for _, a := range st.Attempts {
		io.Printf("  attempt %d (try %d) %s  %s\n", a.Attempt, a.Try, short(a.CommitSHA), a.Verdict)
		for _, r := range a.Reasons {
			io.Printf("    - %s\n", r.Message)
		}
		if a.ProofDir != "" {
			io.Printf("    proof: %s\n", a.ProofDir)
		}
	}
	if st.Payment.State != "" {
		label := ""
		if st.Payment.Local {
			label = " (local: no money moves)"
		}
		io.Printf("  payment: %s via %s%s\n", st.Payment.State, st.Payment.Provider, label)
	}
	if st.PR.URL != "" {
		io.Printf("  deliverable: %s (merge eligible: %v)\n", st.PR.URL, st.MergeEligible)
	}
}

func queryStatus(ctx context.Context, cl client.Client, id string) (workflows.Status, error) {
	v, err := cl.QueryWorkflow(ctx, workflows.WorkflowID(id), "", workflows.QueryStatus)
	if err != nil {
		return workflows.Status{}, iostreams.Failed(notFound(id, err))
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil {
		return workflows.Status{}, iostreams.Failed(err)
	}
	return st, nil
}

func notFound(id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("no contract %q (no workflow %s)", id, workflows.WorkflowID(id))
	}
	return err
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
