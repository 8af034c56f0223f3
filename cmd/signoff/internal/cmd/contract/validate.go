// Package contract holds the `signoff contract ...` commands.
package contract

import (
	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
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
func NewCmdValidate(f *cmdutil.Factory, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: f.IO}
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
func NewCmdHash(f *cmdutil.Factory, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: f.IO}
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

// RunValidate validates and prints a short account of the contract.
func RunValidate(opts *ValidateOptions) error {
	c, err := cmdutil.LoadFile(opts.IO, opts.File, opts.JSON, contracts.LoadOptions{AllowMoreCriteria: opts.AllowMoreCriteria})
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
		opts.File, c.ContractID, c.ContractVersion, len(c.Criteria), c.MaxAttempts, c.Price.String())
	for i, cr := range c.Criteria {
		opts.IO.Printf("  %d. %-20s %s\n", i+1, cr.ID, cr.Description)
	}
	opts.IO.Printf("contract hash: %s\n", h)
	return nil
}

// RunHash prints only the hash.
func RunHash(opts *ValidateOptions) error {
	c, err := cmdutil.LoadFile(opts.IO, opts.File, opts.JSON, contracts.LoadOptions{AllowMoreCriteria: opts.AllowMoreCriteria})
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
