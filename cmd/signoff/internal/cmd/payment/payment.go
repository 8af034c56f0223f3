// Package payment holds `signoff payment authorize ID`: the local checkout from a terminal.
package payment

import (
	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities/ledger"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
)

// Options are the inputs of `payment authorize`.
type Options struct {
	IO      *iostreams.IO
	Conn    cmdutil.Conn
	DataDir string
	ID      string
}

// NewCmdPayment groups the payment commands.
func NewCmdPayment(io *iostreams.IO) *cobra.Command {
	cmd := &cobra.Command{Use: "payment", Short: "The local payment ledger (no money moves)"}
	o := &Options{IO: io}
	auth := &cobra.Command{
		Use:   "authorize ID",
		Short: "Complete a contract's local checkout: authorize (not capture) its price in the local ledger",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			l := ledger.Open(workers.Paths(o.DataDir).Ledger, "")
			c, err := o.Conn.Dial(cmd.Context())
			if err != nil {
				return iostreams.Failed(err)
			}
			defer c.Close()
			if err := web.AuthorizeLocal(cmd.Context(), l, c, o.ID); err != nil {
				return iostreams.Failed(err)
			}
			o.IO.Printf("Authorized %s in the local ledger (no money moves). It is captured only if the contract is satisfied.\n", o.ID)
			return nil
		},
	}
	o.Conn.AddFlags(auth, "127.0.0.1:7233")
	auth.Flags().StringVar(&o.DataDir, "data-dir", cmdutil.DefaultDataDir(), "Signoff data dir")
	cmd.AddCommand(auth)
	return cmd
}
