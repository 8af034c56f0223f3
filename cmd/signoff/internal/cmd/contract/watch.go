package contract

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/cmd/signoff/internal/progress"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// NewCmdWatch builds `contract watch ID`: live progress lines until a final state, or until
// the contract pauses for an operator (exit 1, naming what to do).
func NewCmdWatch(f *cmdutil.Factory, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow a contract live until it reaches a final state or pauses for an operator",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunWatch(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "JSON lines for machines")
	return cmd
}

// RunWatch polls the status query and prints each new timeline event.
func RunWatch(ctx context.Context, o *SimpleOptions) error {
	cl, err := o.NewClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	p := &progress.Printer{Out: o.IO.Out, TTY: o.IO.IsTTY, JSON: o.JSON}
	// A contract paused for an operator waits for a person, maybe the one watching: stop and
	// say what they can do rather than wait for ever.
	st, err := contractclient.New(cl).Watch(ctx, o.ID, 250*time.Millisecond, func(st contractapi.Status) bool {
		p.Update(st)
		return st.State == contracts.StateAwaitingOperator
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return iostreams.Failed(contractclient.NotFound(o.ID, err))
	}
	if !o.JSON {
		o.IO.Printf("\n")
		PrintStatus(o.IO, st)
	}
	if st.State == contracts.StateAwaitingOperator {
		return iostreams.Failed(fmt.Errorf("contract %s is paused for an operator after %s: reply \"retry %s\" or \"abandon %s\" in chat, or run `signoff contract cancel %s`",
			o.ID, dashVerdict(st.Verdict), o.ID, o.ID, o.ID))
	}
	return nil
}

func dashVerdict(v string) string {
	if v == "" {
		return "its verification"
	}
	return v
}

// NewCmdList builds `contract list`: the contract index, which outlives workflow history.
func NewCmdList(f *cmdutil.Factory, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every contract in the index with its state, verdict and proof",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			entries, err := index.Open(datadir.Paths(o.DataDir).Index).List()
			if err != nil {
				return iostreams.Failed(err)
			}
			if o.JSON {
				return o.IO.WriteJSON(entries)
			}
			if len(entries) == 0 {
				o.IO.Printf("No contracts in %s yet.\n", o.DataDir)
			}
			for _, e := range entries {
				o.IO.Printf("%-32s %-18s %-18s attempts %d  %s\n", e.ContractID, e.State, dash(e.Verdict), e.Attempts, e.ProofDir)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
