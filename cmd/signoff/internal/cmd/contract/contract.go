package contract

import (
	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
)

// NewCmdContract groups the contract commands.
func NewCmdContract(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "contract", Short: "Validate, hash and run completion contracts"}
	lifecycle := []*cobra.Command{NewCmdStart(f, nil), NewCmdApprove(f, nil), NewCmdCancel(f, nil), NewCmdStatus(f, nil),
		NewCmdWatch(f, nil), NewCmdList(f, nil)}
	for _, c := range lifecycle {
		f.Conn.AddFlags(c, "127.0.0.1:7233")
	}
	cmd.AddCommand(NewCmdValidate(f, nil), NewCmdHash(f, nil), NewCmdNew(f, nil), NewCmdCheck(f, nil))
	cmd.AddCommand(lifecycle...)
	return cmd
}
