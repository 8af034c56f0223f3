// Package iostreams carries a command's input and output streams and its exit conventions, so
// commands run the same under cobra and in tests.
package iostreams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes shared by every command.
const (
	ExitOK       = 0
	ExitFailure  = 1 // the command ran and the answer is "no" or something broke
	ExitBadInput = 2 // the input was malformed; nothing was changed
)

// IO is a command's world.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTTY says whether Out is a terminal (progress spinners only then).
	IsTTY bool
}

// System returns the process's standard streams.
func System() *IO {
	tty := false
	if fi, err := os.Stdout.Stat(); err == nil {
		tty = fi.Mode()&os.ModeCharDevice != 0
	}
	return &IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, IsTTY: tty}
}

// Test returns streams backed by buffers.
func Test() (*IO, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IO{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}

// ExitError carries an exit code with its cause. Silent errors have already been reported.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// BadInput wraps an error as exit code 2.
func BadInput(err error) error { return &ExitError{Code: ExitBadInput, Err: err} }

// Failed wraps an error as exit code 1.
func Failed(err error) error { return &ExitError{Code: ExitFailure, Err: err} }

// SilentExit exits with code after the command has printed its own account.
func SilentExit(code int) error { return &ExitError{Code: code, Silent: true} }

// ExitCode maps an error a command returned to the process exit code: its ExitError's code,
// else a failure. cmdutil.Execute uses it for every error, after marking what cobra refused
// before any command ran as bad input; tests that run a command directly use it too.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}

// WriteJSON prints v as indented JSON.
func (s *IO) WriteJSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Printf writes human output.
func (s *IO) Printf(format string, args ...any) { fmt.Fprintf(s.Out, format, args...) }
