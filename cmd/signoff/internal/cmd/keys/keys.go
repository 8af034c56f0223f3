// Package keys holds `signoff keys`: the fingerprints of the deployment's verifier and control
// public keys, the values a proof's reader compares the keys they check with against.
package keys

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/datadir"
)

// Options are the inputs of `signoff keys`.
type Options struct {
	IO      *iostreams.IO
	DataDir string
	JSON    bool
}

// NewCmdKeys builds `signoff keys`.
func NewCmdKeys(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Print the fingerprints of this deployment's verifier and control public keys",
		Long: "Prints the sha256 fingerprints (sha256:<hex> of the raw ed25519 public key) and paths of the\n" +
			"verifier's and the control worker's public keys in the data dir. Publish them where readers\n" +
			"of your proofs can compare them: `signoff proof verify --verifier-fingerprint F\n" +
			"--control-fingerprint F` accepts only keys that match. PR comments, quotes and the agent\n" +
			"README carry the same fingerprints. Exits 1 when either key has not been written yet.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

// Run prints the data dir's key fingerprints.
func Run(o *Options) error {
	k, err := datadir.ReadPublishedKeys(o.DataDir)
	if err != nil {
		return iostreams.BadInput(fmt.Errorf("keys: %w", err))
	}
	if o.JSON {
		if err := o.IO.WriteJSON(k); err != nil {
			return err
		}
	} else {
		line := func(name, fp, path, who string) {
			if fp == "" {
				o.IO.Printf("%-8s (none yet: %s not written; start %s with this data dir)\n", name, path, who)
				return
			}
			o.IO.Printf("%-8s %s  %s\n", name, fp, path)
		}
		line("verifier", k.VerifierFingerprint, k.VerifierPath, "a verify worker or `signoff dev`")
		line("control", k.ControlFingerprint, k.ControlPath, "a control worker or `signoff dev`")
		if k.VerifierFingerprint != "" && k.ControlFingerprint != "" {
			o.IO.Printf("check a proof with: signoff proof verify DIR --keys %s --verifier-fingerprint %s --control-fingerprint %s\n",
				datadir.Paths(o.DataDir).Keys, k.VerifierFingerprint, k.ControlFingerprint)
		}
	}
	if k.VerifierFingerprint == "" || k.ControlFingerprint == "" {
		return iostreams.SilentExit(iostreams.ExitFailure)
	}
	return nil
}
