package proof

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/web/proofpage"
)

// VerifyOptions are the inputs of `proof verify`.
type VerifyOptions struct {
	IO   *iostreams.IO
	Dir  string
	JSON bool
	Keys
}

// VerifyResult is the --json output: the keys used and one report per contract, or why no
// key at hand may check this proof (Untrusted).
type VerifyResult struct {
	OK        bool                        `json:"ok"`
	Keys      *TrustedKeys                `json:"keys,omitempty"`
	Untrusted []string                    `json:"untrusted,omitempty"`
	Contracts []proofstore.ContractReport `json:"contracts"`
}

// NewCmdVerify builds `proof verify DIR`.
func NewCmdVerify(f *cmdutil.Factory, runF func(*VerifyOptions) error) *cobra.Command {
	o := &VerifyOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "verify DIR",
		Short: "Re-check a proof offline: digests, both signatures, the hash chain and the verdict",
		Long: "Verifies a proof folder without trusting anything in it: recomputes every artifact digest\n" +
			"and size, checks the evidence signature (verifier key) and the bundle signature (control\n" +
			"key), that the bundle binds the evidence by digest and the contract by hash, the hash-chained\n" +
			"timeline and its head, and re-derives the verdict and its reasons with the policy.\n" +
			"DIR is one verification (<contract>/attempt-<n>/try-<m>), a contract folder (every attempt,\n" +
			"and that each timeline extends the last), or a proof store root (every contract).\n\n" +
			keysHelp + "\n\n" +
			"Exits 0 when every check holds, 1 when any fails or the keys at hand may not check this\n" +
			"proof (naming them and their fingerprints), 2 on bad input (no keys at all, a bad key file).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			o.Dir = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunVerify(o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print machine-readable output")
	return cmd
}

// RunVerify verifies the folder and prints every check.
func RunVerify(o *VerifyOptions) error {
	st, err := os.Stat(o.Dir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	if !st.IsDir() {
		return iostreams.BadInput(fmt.Errorf("%s is not a directory", o.Dir))
	}
	keys, err := o.trust(o.Dir)
	var ue *UntrustedError
	switch {
	case errors.As(err, &ue):
		return o.report(VerifyResult{Untrusted: ue.Problems, Contracts: []proofstore.ContractReport{}})
	case err != nil:
		return err
	case keys == nil:
		return iostreams.BadInput(fmt.Errorf("no keys to check the proof with: %s holds no keys/*.pub; pass --keys DIR, --verifier-key and --control-key, or --data-dir of the deployment (see `signoff keys`)", o.DataDir))
	}
	vk, ck := keys.Verifier, keys.Control
	res := VerifyResult{Keys: keys}
	switch {
	case isFile(filepath.Join(o.Dir, proofstore.BundleFile)):
		rep, err := proofstore.VerifyDir(o.Dir, vk, ck)
		if err != nil {
			return inputOr(err)
		}
		res.Contracts = []proofstore.ContractReport{{ContractID: rep.ContractID, Dir: o.Dir, OK: rep.OK,
			Tries: []proofstore.Report{rep}, Checks: []proofstore.Check{}}}
	default:
		dirs := []string{o.Dir}
		if tries, _ := proofstore.TryDirs(o.Dir); len(tries) == 0 {
			slugs, err := proofpage.ListContracts(o.Dir)
			if err != nil || len(slugs) == 0 {
				return iostreams.BadInput(fmt.Errorf("%s is not a proof: no bundle.json in it, no attempt-<n>/try-<m> below it, no contract folders below it", o.Dir))
			}
			dirs = dirs[:0]
			for _, s := range slugs {
				dirs = append(dirs, filepath.Join(o.Dir, s))
			}
		}
		for _, d := range dirs {
			cr, err := proofstore.VerifyContractDir(d, vk, ck)
			if err != nil {
				return inputOr(err)
			}
			res.Contracts = append(res.Contracts, cr)
		}
	}
	res.OK = true
	for _, c := range res.Contracts {
		res.OK = res.OK && c.OK
	}
	return o.report(res)
}

// report prints res and maps it to the exit code.
func (o *VerifyOptions) report(res VerifyResult) error {
	if o.JSON {
		if err := o.IO.WriteJSON(res); err != nil {
			return err
		}
	} else {
		printVerify(o.IO, res)
	}
	if !res.OK {
		return iostreams.SilentExit(iostreams.ExitFailure)
	}
	return nil
}

func printVerify(io *iostreams.IO, res VerifyResult) {
	if len(res.Untrusted) > 0 {
		io.Printf("NOT VERIFIED: no key at hand may check this proof\n")
		for _, p := range res.Untrusted {
			io.Printf("  %s\n", p)
		}
		return
	}
	if res.Keys != nil {
		io.Printf("%s\n", res.Keys.describe())
	}
	failed, total := 0, 0
	line := func(c proofstore.Check) {
		total++
		mark := "ok    "
		if !c.OK {
			mark = "FAILED"
			failed++
		}
		io.Printf("  %s %s: %s\n", mark, c.Name, c.Message)
	}
	for _, cr := range res.Contracts {
		for _, t := range cr.Tries {
			where := t.Dir
			if t.Attempt > 0 {
				where = fmt.Sprintf("attempt %d, try %d (%s)", t.Attempt, t.Try, t.Dir)
			}
			io.Printf("%s %s: bundle says %s, the policy re-derives %s\n", cr.ContractID, where, orNone(t.Verdict), orNone(t.Rederived))
			for _, c := range t.Checks {
				line(c)
			}
		}
		if len(cr.Checks) > 0 {
			io.Printf("%s across attempts:\n", cr.ContractID)
			for _, c := range cr.Checks {
				line(c)
			}
		}
	}
	if failed == 0 {
		io.Printf("verified: all %d checks hold\n", total)
		return
	}
	io.Printf("NOT VERIFIED: %d of %d checks failed\n", failed, total)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func inputOr(err error) error {
	var ie *proofstore.InputError
	if errors.As(err, &ie) {
		return iostreams.BadInput(err)
	}
	return iostreams.Failed(err)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
