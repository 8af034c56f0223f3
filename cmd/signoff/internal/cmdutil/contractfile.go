package cmdutil

import (
	"errors"
	"fmt"
	"os"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
)

// LoadFile reads and loads a contract, mapping every failure to exit code 2 with the field
// errors printed (human or JSON).
func LoadFile(io *iostreams.IO, file string, asJSON bool, opts contracts.LoadOptions) (*contracts.Contract, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, reportBad(io, asJSON, file, nil, err)
	}
	c, err := contracts.Load(data, opts)
	if err != nil {
		var ve *contracts.ValidationError
		if errors.As(err, &ve) {
			return nil, reportBad(io, asJSON, file, ve.Errors, nil)
		}
		return nil, reportBad(io, asJSON, file, nil, err)
	}
	return c, nil
}

func reportBad(io *iostreams.IO, asJSON bool, file string, fields []contracts.FieldError, err error) error {
	if asJSON {
		out := map[string]any{"file": file, "valid": false}
		if fields != nil {
			out["errors"] = fields
		} else {
			out["error"] = err.Error()
		}
		_ = io.WriteJSON(out)
		return iostreams.SilentExit(iostreams.ExitBadInput)
	}
	if fields == nil {
		return iostreams.BadInput(fmt.Errorf("%s: %w", file, err))
	}
	fmt.Fprintf(io.ErrOut, "%s: not a valid contract (%d problem(s)):\n", file, len(fields))
	for _, fe := range fields {
		fmt.Fprintf(io.ErrOut, "  %s\n", fe)
	}
	return iostreams.SilentExit(iostreams.ExitBadInput)
}
