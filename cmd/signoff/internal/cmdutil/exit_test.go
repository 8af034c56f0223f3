package cmdutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

func TestExecuteMapsExitCodes(t *testing.T) {
	tree := func(runErr error) *cobra.Command {
		root := &cobra.Command{Use: "signoff", SilenceUsage: true, SilenceErrors: true}
		sub := &cobra.Command{Use: "do", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return runErr }}
		sub.Flags().Int("n", 0, "")
		root.AddCommand(sub)
		return root
	}
	for name, c := range map[string]struct {
		args   []string
		runErr error
		code   int
		said   string
	}{
		"ok":               {[]string{"do", "x"}, nil, iostreams.ExitOK, ""},
		"a failure":        {[]string{"do", "x"}, errors.New("boom"), iostreams.ExitFailure, "signoff: boom"},
		"bad input":        {[]string{"do", "x"}, iostreams.BadInput(errors.New("no such file")), iostreams.ExitBadInput, "no such file"},
		"already reported": {[]string{"do", "x"}, iostreams.SilentExit(iostreams.ExitFailure), iostreams.ExitFailure, ""},
		"unknown flag":     {[]string{"do", "x", "--nope"}, nil, iostreams.ExitBadInput, "unknown flag"},
		"flag value":       {[]string{"do", "x", "--n", "many"}, nil, iostreams.ExitBadInput, "invalid argument"},
		"argument count":   {[]string{"do"}, nil, iostreams.ExitBadInput, "accepts 1 arg"},
		"unknown command":  {[]string{"undo"}, nil, iostreams.ExitBadInput, "unknown command"},
		"failure says so":  {[]string{"do", "x"}, errors.New("unknown flag in the app's own output"), iostreams.ExitFailure, "unknown flag"},
	} {
		t.Run(name, func(t *testing.T) {
			io, _, errOut := iostreams.Test()
			cmd := tree(c.runErr)
			cmd.SetArgs(c.args)
			if code := Execute(cmd, io); code != c.code {
				t.Errorf("exit %d, want %d (%s)", code, c.code, errOut)
			}
			if c.said == "" && errOut.Len() > 0 || !strings.Contains(errOut.String(), c.said) {
				t.Errorf("printed %q, want %q", errOut, c.said)
			}
		})
	}
}
