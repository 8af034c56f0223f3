package contract

import (
	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

// NewCmdContract groups the contract commands.
func NewCmdContract(io *iostreams.IO) *cobra.Command {
	cmd := &cobra.Command{Use: "contract", Short: "Validate, hash and run completion contracts"}
	d := &Deps{IO: io, Conn: &cmdutil.Conn{}, DataDir: new(string)}
	cmd.PersistentFlags().StringVar(d.DataDir, "data-dir", cmdutil.DefaultDataDir(), "Signoff data dir (keys, index, ledger)")
	lifecycle := []*cobra.Command{NewCmdStart(d, nil), NewCmdApprove(d, nil), NewCmdCancel(d, nil), NewCmdStatus(d, nil),
		NewCmdWatch(d, nil), NewCmdList(d, nil)}
	for _, c := range lifecycle {
		d.Conn.AddFlags(c, "127.0.0.1:7233")
	}
	cmd.AddCommand(NewCmdValidate(io, nil), NewCmdHash(io, nil), NewCmdNew(io, nil), NewCmdCheck(io, nil))
	cmd.AddCommand(lifecycle...)
	return cmd
}
