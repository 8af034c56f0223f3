package contract

import (
	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

// NewCmdContract groups the contract commands.
func NewCmdContract(io *iostreams.IO) *cobra.Command {
	cmd := &cobra.Command{Use: "contract", Short: "Validate, hash and run completion contracts"}
	cmd.AddCommand(NewCmdValidate(io, nil), NewCmdHash(io, nil))
	return cmd
}
