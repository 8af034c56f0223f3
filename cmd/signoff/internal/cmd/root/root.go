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
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

// NewCmdRoot returns the top-level command.
func NewCmdRoot(io *iostreams.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signoff",
		Short: "Delegated software work, called done only when independent browser evidence says so",
		Long: "Signoff turns a request into a frozen, hashed contract of executable browser criteria,\n" +
			"has a coding CLI make the change, verifies the exact deployed commit in a real browser,\n" +
			"and captures the authorized payment only when the deterministic policy says satisfied.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	cmd.AddCommand(chat.NewCmdChat(io, nil))
	cmd.AddCommand(contract.NewCmdContract(io), policy.NewCmdPolicy(io), dev.NewCmdDev(io, nil), dev.NewCmdWorker(io, nil),
		payment.NewCmdPayment(io), replay.NewCmdReplay(io, nil), proof.NewCmdProof(io), keys.NewCmdKeys(io, nil))
	return cmd
}
