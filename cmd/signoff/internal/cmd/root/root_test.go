package root

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

// pflag takes the first `quoted` words of a usage as the flag's placeholder, so a usage that
// quotes a command in backticks shows as `--check signoff dev` in help. No flag's placeholder
// may be more than one word.
func TestHelpPlaceholdersAreOneWord(t *testing.T) {
	io, _, _ := iostreams.Test()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s shows the placeholder %q in help", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(cmdutil.New(io)))
}
