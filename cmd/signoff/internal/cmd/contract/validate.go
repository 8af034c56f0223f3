// Package contract holds the `signoff contract ...` commands.
package contract

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
)

// ValidateOptions are the inputs of `contract validate` and `contract hash`.
type ValidateOptions struct {
	IO                *iostreams.IO
	File              string
	JSON              bool
	AllowMoreCriteria bool
}

// NewCmdValidate builds `contract validate FILE`; runF replaces the run in tests.
func NewCmdValidate(io *iostreams.IO, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a contract against the schema and the semantic rules",
		Long: "Parses, schema-validates and checks a contract. Bad input exits 2 and names each\n" +
			"broken rule with a JSON pointer into the file.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return RunValidate(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print machine-readable output")
	cmd.Flags().BoolVar(&opts.AllowMoreCriteria, "allow-more-criteria", false, "accept more than 6 criteria")
	return cmd
}

// NewCmdHash builds `contract hash FILE`.
func NewCmdHash(io *iostreams.IO, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "hash FILE",
		Short: "Print the contract hash a user approves (sha256 of the RFC 8785 canonical terms)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return RunHash(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print machine-readable output")
	cmd.Flags().BoolVar(&opts.AllowMoreCriteria, "allow-more-criteria", false, "accept more than 6 criteria")
	return cmd
}

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

// RunValidate validates and prints a short account of the contract.
func RunValidate(opts *ValidateOptions) error {
	c, err := LoadFile(opts.IO, opts.File, opts.JSON, contracts.LoadOptions{AllowMoreCriteria: opts.AllowMoreCriteria})
	if err != nil {
		return err
	}
	h, err := contracts.Hash(*c)
	if err != nil {
		return iostreams.Failed(err)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(map[string]any{"file": opts.File, "valid": true, "contract_id": c.ContractID,
			"contract_hash": h, "criteria": len(c.Criteria)})
	}
	opts.IO.Printf("%s: valid contract %s (v%d), %d criteria, max %d attempts, price %s\n",
		opts.File, c.ContractID, c.ContractVersion, len(c.Criteria), c.MaxAttempts, FormatPrice(c.Price))
	for i, cr := range c.Criteria {
		opts.IO.Printf("  %d. %-20s %s\n", i+1, cr.ID, cr.Description)
	}
	opts.IO.Printf("contract hash: %s\n", h)
	return nil
}

// RunHash prints only the hash.
func RunHash(opts *ValidateOptions) error {
	c, err := LoadFile(opts.IO, opts.File, opts.JSON, contracts.LoadOptions{AllowMoreCriteria: opts.AllowMoreCriteria})
	if err != nil {
		return err
	}
	h, err := contracts.Hash(*c)
	if err != nil {
		return iostreams.Failed(err)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(map[string]any{"contract_id": c.ContractID, "contract_hash": h})
	}
	opts.IO.Printf("%s\n", h)
	return nil
}

// FormatPrice renders minor units as an amount with its currency.
func FormatPrice(p contracts.Price) string {
	return fmt.Sprintf("%d.%02d %s", p.Amount/100, p.Amount%100, p.Currency)
}
