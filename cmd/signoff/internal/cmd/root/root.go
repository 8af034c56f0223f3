// Package root assembles the signoff command tree.
package root

import (
	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/chat"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/contract"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/dev"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/keys"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/payment"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/policy"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/proof"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/replay"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/server"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
)

// NewCmdRoot returns the top-level command. Every command is built from f, and --data-dir is
// declared once, here, for all of them.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signoff",
		Short: "Delegated software work, called done only when independent browser evidence says so",
		Long: "Signoff turns a request into a frozen, hashed contract of executable browser criteria,\n" +
			"has a coding CLI make the change, verifies the exact deployed commit in a real browser,\n" +
			"and captures the authorized payment only when the deterministic policy says satisfied.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.PersistentFlags().StringVar(&f.DataDir, "data-dir", f.DataDir, "Signoff data dir: keys, index, proofs, previews, clones (default $SIGNOFF_DATA_DIR or .signoff)")
	cmd.AddCommand(chat.NewCmdChat(f, nil))
	cmd.AddCommand(contract.NewCmdContract(f), policy.NewCmdPolicy(f), dev.NewCmdDev(f, nil), dev.NewCmdWorker(f, nil),
		payment.NewCmdPayment(f), replay.NewCmdReplay(f, nil), proof.NewCmdProof(f), keys.NewCmdKeys(f, nil), server.NewCmdServer(f, nil))
	return cmd
}
