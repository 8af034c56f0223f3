package proof

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofsync"
)

// GetOptions are the inputs of `proof get`.
type GetOptions struct {
	IO         *iostreams.IO
	DataDir    string
	ContractID string
	Artifacts  string
	Out        string
}

// NewCmdGet builds `proof get CONTRACT`.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	o := &GetOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "get CONTRACT",
		Short: "Copy a contract's proof folder out of the artifact store",
		Long: "Materialises <out>/<contract>/ from the artifact store the workers share: each attempt's\n" +
			"evidence, screenshots and traces (published by the verify queue), its bundle and contract\n" +
			"(control queue), the base check and the settlement. Every file is checked against its digest\n" +
			"on the way. `signoff proof verify <out>/<contract>` then checks the proof as usual.\n\n" +
			"--artifacts defaults to the data dir's own store (file://<data-dir>/artifacts). The contract's\n" +
			"folder must not exist yet under --out, so nothing is mixed into an older copy.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			o.ContractID = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunGet(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Artifacts, "artifacts", "", "artifact store URL: file:///abs/path or s3://bucket?endpoint=...&region=... (default: the data dir's store)")
	cmd.Flags().StringVar(&o.Out, "out", "proofs", "folder to write <contract>/ into")
	return cmd
}

// RunGet materialises the proof folder and says how to check it.
func RunGet(ctx context.Context, o *GetOptions) error {
	if !contracts.ValidContractID(o.ContractID) {
		return iostreams.BadInput(fmt.Errorf("%q is not a contract id", o.ContractID))
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return iostreams.BadInput(err)
	}
	dest := filepath.Join(out, o.ContractID)
	if _, err := os.Lstat(dest); err == nil {
		return iostreams.BadInput(fmt.Errorf("%s already exists; remove it or pass another --out", dest))
	}
	url := o.Artifacts
	if url == "" {
		url = datadir.DefaultArtifactsURL(o.DataDir)
	}
	store, err := artifacts.Open(ctx, url)
	if err != nil {
		return iostreams.BadInput(fmt.Errorf("--artifacts: %w", err))
	}
	defer store.Close()
	parts, err := proofsync.Sync{Store: store, Root: out}.FetchContract(ctx, o.ContractID)
	if err != nil {
		// A partial copy must not pass for a proof folder.
		_ = os.RemoveAll(dest)
		if errors.Is(err, artifacts.ErrNotFound) {
			return iostreams.Failed(fmt.Errorf("no proof of %s in %s: %w", o.ContractID, url, err))
		}
		return iostreams.Failed(err)
	}
	o.IO.Printf("%s: %d parts from %s\n", dest, len(parts), url)
	for _, p := range parts {
		o.IO.Printf("  %s\n", p)
	}
	o.IO.Printf("check it:  signoff proof verify %s --keys <folder with verifier.key.pub and control.key.pub>\n", dest)
	return nil
}
