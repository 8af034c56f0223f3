// Package payment holds `signoff payment authorize ID`: the local test checkout from a terminal.
package payment

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/web"
)

// Options are the inputs of `payment authorize`.
type Options struct {
	IO      *iostreams.IO
	Conn    cmdutil.Conn
	DataDir string
	ID      string
}

// NewCmdPayment groups the payment commands.
func NewCmdPayment(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "payment", Short: "The local Stripe test double's checkout (test mode: no money moves)"}
	o := &Options{IO: f.IO}
	auth := &cobra.Command{
		Use:   "authorize ID",
		Short: "Complete a contract's checkout on the local Stripe test double: authorize (not capture) its price with a test card",
		Long: "Pays the contract's checkout on the local Stripe test double as if its page's Authorize button\n" +
			"were pressed: a test card, no real Stripe, no money moves. The workflow hears of it from the\n" +
			"double's signed webhook (or its own poll). A checkout on real Stripe is paid in a browser.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			o.ID = args[0]
			c, err := o.Conn.In(f.DataDir).Dial(cmd.Context())
			if err != nil {
				return iostreams.Failed(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			paid, err := web.CompleteTestCheckout(ctx, c, o.ID)
			if err != nil {
				return iostreams.Failed(err)
			}
			if !paid.NewlyAuthorized {
				o.IO.Printf("%s's checkout %s was already authorized (local Stripe test double, no money moves).\n", o.ID, paid.SessionID)
				return nil
			}
			o.IO.Printf("Authorized %s on the local Stripe test double (test mode, no money moves): PaymentIntent %s.\n"+
				"It is captured only if the contract is satisfied.\n", o.ID, paid.PaymentIntentID)
			return nil
		},
	}
	o.Conn.AddFlags(auth, "127.0.0.1:7233")
	cmd.AddCommand(auth)
	return cmd
}
