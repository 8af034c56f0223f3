package main

import (
	"errors"
	"strings"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

func asExit(err error, target **iostreams.ExitError) bool { return errors.As(err, target) }

// exitCode maps errors to exit codes; cobra's own flag and argument errors are bad input.
func exitCode(err error) int {
	if err == nil {
		return iostreams.ExitOK
	}
	var ee *iostreams.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	msg := err.Error()
	for _, usage := range []string{"unknown flag", "unknown command", "required flag", "accepts ", "invalid argument", "flag needs an argument", "unknown shorthand"} {
		if strings.Contains(msg, usage) {
			return iostreams.ExitBadInput
		}
	}
	return iostreams.ExitFailure
}
