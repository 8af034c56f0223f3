package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

// Execute runs the command tree and returns the process exit code, printing the error unless
// the command already gave its own account. It is the one place exit codes are decided:
// an error a command returns carries its code (iostreams.ExitError) or is a failure (1); an
// error cobra raises before any command ran (a flag, the arguments, an unknown command) is
// bad input (2).
func Execute(root *cobra.Command, io *iostreams.IO) int {
	ran := false
	var mark func(c *cobra.Command)
	mark = func(c *cobra.Command) {
		if run := c.RunE; run != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				ran = true
				return run(cmd, args)
			}
		}
		for _, sub := range c.Commands() {
			mark(sub)
		}
	}
	mark(root)
	err := root.Execute()
	if err == nil {
		return iostreams.ExitOK
	}
	var ee *iostreams.ExitError
	if !errors.As(err, &ee) && !ran {
		// cobra refused the command line before any command ran.
		ee = &iostreams.ExitError{Code: iostreams.ExitBadInput, Err: err}
		err = ee
	}
	if ee == nil || !ee.Silent {
		fmt.Fprintln(io.ErrOut, "signoff:", err)
	}
	return iostreams.ExitCode(err)
}
