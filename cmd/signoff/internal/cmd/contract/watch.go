package contract

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities/index"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/cmd/signoff/internal/progress"
	"github.com/signoff/signoff/workers"
)

// NewCmdWatch builds `contract watch ID`: live progress lines until a final state.
func NewCmdWatch(d *Deps, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Deps: d}
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow a contract live until it reaches a final state",
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
	cl, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	p := &progress.Printer{Out: o.IO.Out, TTY: o.IO.IsTTY, JSON: o.JSON}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := queryStatus(ctx, cl, o.ID)
		if err != nil {
			return err
		}
		p.Update(st)
		if st.Final {
			if !o.JSON {
				o.IO.Printf("\n")
				PrintStatus(o.IO, st)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// NewCmdList builds `contract list`: the contract index, which outlives workflow history.
func NewCmdList(d *Deps, runF func(*SimpleOptions) error) *cobra.Command {
	o := &SimpleOptions{Deps: d}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every contract in the index with its state, verdict and proof",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			entries, err := index.Open(workers.Paths(*o.DataDir).Index).List()
			if err != nil {
				return iostreams.Failed(err)
			}
			if o.JSON {
				return o.IO.WriteJSON(entries)
			}
			if len(entries) == 0 {
				o.IO.Printf("No contracts in %s yet.\n", *o.DataDir)
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
