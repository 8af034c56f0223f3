package contract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// StartOptions are the inputs of `contract start`.
type StartOptions struct {
	*cmdutil.Factory
	File      string
	Requester string
	CheckBase bool
	// Quote is the quote file ("" looks beside FILE; "none" starts without one).
	Quote string
	JSON  bool
}

// NewCmdStart builds `contract start FILE`.
func NewCmdStart(f *cmdutil.Factory, runF func(*StartOptions) error) *cobra.Command {
	o := &StartOptions{Factory: f}
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
	cmd.Flags().StringVar(&o.Quote, "quote", "", "quote file from 'contract new' (default: FILE's .quote.json if present; none: start unquoted)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

// defaultRequester is the user this process runs as (its account, not $USER: a requester
// is who may approve).
func defaultRequester() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "cli"
}

// RunStart loads the contract and starts its workflow in state quoted.
func RunStart(ctx context.Context, o *StartOptions) error {
	s, err := o.Settings()
	if err != nil {
		return err
	}
	c, err := cmdutil.LoadFile(o.IO, o.File, o.JSON, contracts.LoadOptions{})
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
	trust, err := o.Trust()
	if err != nil {
		return iostreams.Failed(err)
	}
	cl, err := o.NewClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Refused before anything else runs: a base check would write into the existing
	// contract's proof folder.
	if _, err := cl.DescribeWorkflowExecution(ctx, contractapi.WorkflowID(c.ContractID), ""); err == nil {
		return iostreams.BadInput(alreadyStarted(ctx, cl, c.ContractID))
	} else if nf := (*serviceerror.NotFound)(nil); !errors.As(err, &nf) {
		return iostreams.Failed(fmt.Errorf("look up contract %s: %w", c.ContractID, err))
	}
	var disc *contracts.BaseCheck
	if o.CheckBase {
		// Through the queues of the cluster the contract will run on.
		d, _, derr, err := checkBase(ctx, &CheckOptions{IO: o.IO, Conn: *o.Conn, DataDir: o.DataDir}, c)
		if err != nil {
			return err
		}
		if derr != nil {
			return iostreams.Failed(fmt.Errorf("not quoted: %w", derr))
		}
		disc = d.Record()
	}
	in := contractapi.ContractInput{Quote: q, Channel: "cli", Trust: trust, BaseCheck: disc,
		Timeouts: cmdutil.ContractTimeouts(s)}
	if qf != nil {
		in.QuoteExpiresAt = qf.Estimate.ExpiresAt
		if bc := qf.BaseCheck; disc == nil && bc != nil && bc.BaseSHA == c.Repo.BaseCommitSHA {
			in.BaseCheck = bc
		}
	}
	_, err = contractclient.New(cl).Start(ctx, in)
	if contractclient.AlreadyStarted(err) {
		return iostreams.BadInput(alreadyStarted(ctx, cl, c.ContractID))
	}
	if err != nil {
		return iostreams.Failed(fmt.Errorf("start workflow: %w", err))
	}
	if o.JSON {
		out := map[string]any{"contract_id": c.ContractID, "contract_hash": q.Hash, "state": contracts.StateQuoted,
			"requester": o.Requester, "workflow_id": contractapi.WorkflowID(c.ContractID)}
		if qf != nil {
			out["quote_expires_at"] = qf.Estimate.ExpiresAt
		}
		return o.IO.WriteJSON(out)
	}
	o.IO.Printf("Quoted %s: %d criteria, fixed price %s, max %d attempts.\n", c.ContractID, len(c.Criteria), c.Price.String(), c.MaxAttempts)
	o.IO.Printf("Contract hash: %s\n", q.Hash)
	if qf != nil {
		o.IO.Printf("The quote stands until %s; the contract expires unapproved after that.\n", qf.Estimate.ExpiresAt.Format(time.RFC3339))
	}
	o.IO.Printf("Approve exactly this hash with:\n  signoff contract approve %s %s\n", c.ContractID, q.Hash)
	return nil
}

// alreadyStarted says why a start was refused: the contract id has a workflow already, in
// the state named. Nothing of it was touched.
func alreadyStarted(ctx context.Context, cl client.Client, id string) error {
	state := "state unknown"
	if d, err := cl.DescribeWorkflowExecution(ctx, contractapi.WorkflowID(id), ""); err == nil && d.GetWorkflowExecutionInfo() != nil {
		info := d.GetWorkflowExecutionInfo()
		state = "workflow " + strings.ToLower(strings.TrimPrefix(info.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))
		if t := info.GetStartTime(); t != nil {
			state += ", started " + t.AsTime().UTC().Format(time.RFC3339)
		}
	}
	return fmt.Errorf("contract %s already has a workflow (%s); nothing was started, and its state, proof and payment are untouched. "+
		"Every quote is one contract: run `signoff contract new` again for a new contract id", id, state)
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
	*cmdutil.Factory
	ID, Hash, As, MessageID string
	JSON                    bool
}

// NewCmdApprove builds `contract approve ID HASH`.
func NewCmdApprove(f *cmdutil.Factory, runF func(*ApproveOptions) error) *cobra.Command {
	o := &ApproveOptions{Factory: f}
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

// RunApprove sends the approval through the workflow's approve update and reports its
// answer: taken, or refused with the workflow's reason.
func RunApprove(ctx context.Context, o *ApproveOptions) error {
	if len(o.Hash) != 64 {
		return iostreams.BadInput(fmt.Errorf("HASH must be the 64-character contract hash you were shown"))
	}
	if o.MessageID == "" {
		o.MessageID = randomID()
	}
	cl, err := o.NewClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := contractclient.New(cl).Approve(actx, o.ID,
		contractapi.Approve{Hash: o.Hash, Approver: o.As, Channel: "cli", MessageID: o.MessageID})
	var refused *contractapi.ApprovalRefusal
	if errors.As(err, &refused) {
		if o.JSON {
			_ = o.IO.WriteJSON(map[string]any{"approved": false, "reason": refused.Reason, "code": refused.Code})
		} else {
			fmt.Fprintln(o.IO.ErrOut, "refused:", refused.Reason)
		}
		return iostreams.SilentExit(iostreams.ExitFailure)
	}
	if errors.Is(err, contractclient.ErrNotAnswered) {
		return iostreams.Failed(errors.New("the workflow did not answer the approval within 10 s (is a worker running?); see `signoff contract status`"))
	}
	if err != nil {
		return iostreams.Failed(contractclient.NotFound(o.ID, err))
	}
	// The checkout is created just after the approval; show its link when it already is.
	checkout := ""
	if st, err := contractclient.New(cl).Status(ctx, o.ID); err == nil {
		checkout = st.Payment.CheckoutURL
	}
	if o.JSON {
		return o.IO.WriteJSON(map[string]any{"approved": true, "state": res.State, "checkout_url": checkout})
	}
	o.IO.Printf("Approved %s (hash %s).\n", o.ID, o.Hash[:12])
	if checkout != "" {
		o.IO.Printf("Authorize the payment (captured only if satisfied): %s\n", checkout)
	}
	return nil
}

// SimpleOptions are the inputs of cancel, status and watch.
type SimpleOptions struct {
	*cmdutil.Factory
	ID   string
	JSON bool
}

// NewCmdCancel builds `contract cancel ID`.
func NewCmdCancel(f *cmdutil.Factory, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a contract; an authorization is cancelled, never captured",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(o)
			}
			cl, err := o.NewClient(cmd.Context())
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := contractclient.New(cl).Cancel(cmd.Context(), o.ID,
				contractapi.Cancel{By: defaultRequester(), Reason: "cancelled from the CLI"}); err != nil {
				return iostreams.Failed(contractclient.NotFound(o.ID, err))
			}
			o.IO.Printf("Cancel requested for %s.\n", o.ID)
			return nil
		},
	}
	return cmd
}

// NewCmdStatus builds `contract status ID`.
func NewCmdStatus(f *cmdutil.Factory, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Factory: f}
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
	cl, err := o.NewClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	st, err := queryStatus(ctx, cl, o.ID)
	if err != nil {
		e, ok, ierr := index.Open(datadir.Paths(o.DataDir).Index).Get(o.ID)
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
func PrintStatus(io *iostreams.IO, st contractapi.Status) {
	io.Printf("%s  %s\n", st.ContractID, st.State)
	io.Printf("  goal: %s\n  hash: %s\n", st.Goal, st.ContractHash)
	if (st.State == contracts.StateQuoted || st.State == contracts.StateExpired) && !st.QuoteExpiresAt.IsZero() {
		io.Printf("  quote open until: %s\n", st.QuoteExpiresAt.UTC().Format(time.RFC3339))
	}
	for _, e := range st.Timeline {
		if e.Type == contracts.EventBaseCheck {
			io.Printf("  base check (%s): fails on base %s; regression guards %s\n", orDash(e.Data[contracts.DataCheckedOn]), orDash(e.Data[contracts.DataFailingOnBase]), orDash(e.Data[contracts.DataRegressionGuards]))
		}
	}
	if st.Verdict != "" {
		io.Printf("  verdict: %s\n", st.Verdict)
	}
	for _, a := range st.Attempts {
		io.Printf("  attempt %d (try %d) %s  %s\n", a.Attempt, a.Try, contracts.ShortSHA(a.CommitSHA), a.Verdict)
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

func queryStatus(ctx context.Context, cl client.Client, id string) (contractapi.Status, error) {
	st, err := contractclient.New(cl).Status(ctx, id)
	if err != nil {
		return contractapi.Status{}, iostreams.Failed(contractclient.NotFound(id, err))
	}
	return st, nil
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
