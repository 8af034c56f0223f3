package proof

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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
func NewCmdRender(io *iostreams.IO, runF func(*RenderOptions) error) *cobra.Command {
	o := &RenderOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "render PROOF_DIR --out SITE_DIR",
		Short: "Write proof pages as a static site (raw trace links)",
		Long: "Renders the proof page of each contract in PROOF_DIR (a proof store root, a contract folder\n" +
			"or one attempt's folder) into SITE_DIR, with the screenshots, traces and signed documents\n" +
			"copied beside the pages, so the folder opens from disk or any static host. Pages show the\n" +
			"offline verification when the public keys are found (see --verifier-key). Traces are linked\n" +
			"as raw files: the trace viewer needs a served origin, see `signoff proof serve`.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	vk, ck, err := o.load(false)
	if err != nil {
		return err
	}
	res, err := proofpage.RenderSite(root, slugs, out, proofpage.Options{VerifierKey: vk, ControlKey: ck, Index: statusIndex(o.DataDir)})
	if err != nil {
		return iostreams.Failed(fmt.Errorf("render: %w", err))
	}
	if o.JSON {
		return o.IO.WriteJSON(res)
	}
	o.IO.Printf("rendered %d contract page(s) into %s (%d files copied)\n", len(slugs), out, res.Files)
	for _, p := range res.Pages {
		o.IO.Printf("  %s\n", p)
	}
	switch {
	case res.Verified == nil:
		o.IO.Printf("not verified: no public keys found; the pages say so (pass --verifier-key and --control-key)\n")
	case *res.Verified:
		o.IO.Printf("verified: every check holds; the pages show each one\n")
	default:
		o.IO.Printf("NOT VERIFIED: some checks failed; the pages name them (see `signoff proof verify`)\n")
	}
	return nil
}
