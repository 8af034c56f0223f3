package proof

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/web/proofpage"
)

// RenderOptions are the inputs of `proof render`.
type RenderOptions struct {
	IO   *iostreams.IO
	Dir  string
	Out  string
	JSON bool
	Keys
}

// NewCmdRender builds `proof render PROOF_DIR --out SITE_DIR`.
func NewCmdRender(f *cmdutil.Factory, runF func(*RenderOptions) error) *cobra.Command {
	o := &RenderOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "render PROOF_DIR --out SITE_DIR",
		Short: "Write proof pages as a static site (raw trace links)",
		Long: "Renders the proof page of each contract in PROOF_DIR (a proof store root, a contract folder\n" +
			"or one attempt's folder) into SITE_DIR, with the screenshots, traces and signed documents\n" +
			"copied beside the pages, so the folder opens from disk or any static host. Traces are linked\n" +
			"as raw files: the trace viewer needs a served origin, see `signoff proof serve`.\n\n" +
			keysHelp + "\n\n" +
			"Without usable keys the site is still written, every page headed \"unverified\" and saying\n" +
			"why. Exits 0 only when every page verifies; 1 when any check fails or no usable keys were\n" +
			"given (the site is written either way); 2 on bad input.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			o.Dir = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunRender(o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.Out, "out", "", "the folder to write the site into (created if missing)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// RunRender writes the site.
func RunRender(o *RenderOptions) error {
	root, slugs, err := proofpage.Resolve(o.Dir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return iostreams.BadInput(err)
	}
	if rel, err := filepath.Rel(root, out); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return iostreams.BadInput(fmt.Errorf("--out %s is inside the proof store %s: write the site elsewhere", o.Out, root))
	}
	opts, keys, err := o.pageOptions(o.Dir)
	if err != nil {
		return err
	}
	res, err := proofpage.RenderSite(root, slugs, out, opts)
	if err != nil {
		return iostreams.Failed(fmt.Errorf("render: %w", err))
	}
	verified := res.Verified != nil && *res.Verified
	if o.JSON {
		if err := o.IO.WriteJSON(RenderResult{SiteResult: res, Keys: keys, Note: opts.KeyNote}); err != nil {
			return err
		}
		return unverifiedExit(verified)
	}
	if keys != nil {
		o.IO.Printf("%s\n", keys.describe())
	}
	o.IO.Printf("rendered %d contract page(s) into %s (%d files copied)\n", len(slugs), out, res.Files)
	for _, p := range res.Pages {
		o.IO.Printf("  %s\n", p)
	}
	switch {
	case res.Verified == nil:
		o.IO.Printf("NOT VERIFIED: %s; the pages are headed unverified\n", opts.KeyNote)
	case *res.Verified:
		o.IO.Printf("verified: every check holds; the pages show each one\n")
	default:
		o.IO.Printf("NOT VERIFIED: some checks failed; the pages name them (see `signoff proof verify`)\n")
	}
	return unverifiedExit(verified)
}

// RenderResult is the --json output of `proof render`.
type RenderResult struct {
	proofpage.SiteResult
	Keys *TrustedKeys `json:"keys,omitempty"`
	Note string       `json:"not_verified_because,omitempty"`
}

// unverifiedExit is exit 1 for a site that does not verify: its pages were written, but a
// script must not take them for a verified proof.
func unverifiedExit(verified bool) error {
	if verified {
		return nil
	}
	return iostreams.SilentExit(iostreams.ExitFailure)
}

// pageOptions are the proof page options for the proof at dir: the trusted keys, or why there
// are none (the pages say it). Bad input is an error.
func (k *Keys) pageOptions(dir string) (proofpage.Options, *TrustedKeys, error) {
	o := proofpage.Options{Index: statusIndex(k.DataDir)}
	keys, err := k.trust(dir)
	var ue *UntrustedError
	switch {
	case errors.As(err, &ue):
		o.KeyNote = "the keys at hand may not check this proof: " + strings.Join(ue.Problems, "; ")
		return o, nil, nil
	case err != nil:
		return o, nil, err
	case keys == nil:
		o.KeyNote = fmt.Sprintf("no verifier and control public keys were given (%s holds none): pass --keys DIR or pin the fingerprints", k.DataDir)
		return o, nil, nil
	}
	o.VerifierKey, o.ControlKey = keys.Verifier, keys.Control
	return o, keys, nil
}
