// Package policy holds `signoff policy decide`.
package policy

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
)

// DecideOptions are the inputs of `policy decide`.
type DecideOptions struct {
	IO           *iostreams.IO
	ContractFile string
	EvidenceFile string
	PubKey       string
	SHA          string
	ApprovedHash string
	BuildFailed  bool
	ExitStatus   bool
	JSON         bool
}

// NewCmdPolicy groups the policy commands.
func NewCmdPolicy(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "The deterministic verdict policy"}
	cmd.AddCommand(NewCmdDecide(f, nil))
	return cmd
}

// NewCmdDecide builds `policy decide`.
func NewCmdDecide(f *cmdutil.Factory, runF func(*DecideOptions) error) *cobra.Command {
	opts := &DecideOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "decide --contract FILE --evidence FILE --pubkey KEY --sha SHA",
		Short: "Decide satisfied / not_satisfied / verification_error from signed evidence",
		Long: "Applies the verdict policy offline: checks the verifier's ed25519 signature with KEY\n" +
			"(base64 or hex, or @FILE holding either), recomputes every criterion from the observed\n" +
			"values, and compares the runtime commit with SHA, the implementation commit.\n" +
			"Exits 0 when a verdict was reached (use --exit-status to exit 1 unless satisfied), 2 on bad input.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return RunDecide(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.ContractFile, "contract", "", "the approved contract (JSON)")
	fs.StringVar(&opts.EvidenceFile, "evidence", "", "the verifier's evidence.json")
	fs.StringVar(&opts.PubKey, "pubkey", "", "the verifier's ed25519 public key: base64, hex, or @FILE")
	fs.StringVar(&opts.SHA, "sha", "", "the implementation commit SHA the preview must run")
	fs.StringVar(&opts.ApprovedHash, "approved-hash", "", "the hash the user approved (default: the contract's own hash)")
	fs.BoolVar(&opts.BuildFailed, "build-failed", false, "the implementation build failed")
	fs.BoolVar(&opts.ExitStatus, "exit-status", false, "exit 1 unless the verdict is satisfied")
	fs.BoolVar(&opts.JSON, "json", false, "print machine-readable output")
	for _, name := range []string{"contract", "evidence", "pubkey", "sha"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// ParsePublicKey reads an ed25519 public key as base64 or hex, or from @FILE.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(rest)
		if err != nil {
			return nil, err
		}
		s = string(b)
	}
	s = strings.TrimSpace(s)
	for _, dec := range []func(string) ([]byte, error){hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawURLEncoding.DecodeString} {
		if b, err := dec(s); err == nil && len(b) == ed25519.PublicKeySize {
			return ed25519.PublicKey(b), nil
		}
	}
	return nil, fmt.Errorf("--pubkey: not a %d-byte ed25519 public key in base64 or hex", ed25519.PublicKeySize)
}

// RunDecide loads the inputs and prints the decision.
func RunDecide(opts *DecideOptions) error {
	c, err := cmdutil.LoadFile(opts.IO, opts.ContractFile, opts.JSON, contracts.LoadOptions{AllowMoreCriteria: true})
	if err != nil {
		return err
	}
	pub, err := ParsePublicKey(opts.PubKey)
	if err != nil {
		return iostreams.BadInput(err)
	}
	if !isSHA(opts.SHA) {
		return iostreams.BadInput(fmt.Errorf("--sha %q: want a 40 or 64 character hex commit SHA", opts.SHA))
	}
	data, err := os.ReadFile(opts.EvidenceFile)
	if err != nil {
		return iostreams.BadInput(err)
	}
	// Schema-invalid evidence is a verdict (verification_error), not a usage error; only
	// bytes that are not JSON at all are bad input.
	ev, err := contracts.DecodeEvidence(data)
	if err != nil {
		var ve *contracts.ValidationError
		if !errors.As(err, &ve) || ve.Errors[0].Rule == "json_syntax" || ve.Errors[0].Rule == "duplicate_key" {
			return iostreams.BadInput(fmt.Errorf("%s: %w", opts.EvidenceFile, err))
		}
		ev = &contracts.Evidence{}
		_ = json.Unmarshal(data, ev) // the policy re-validates and names the problem
	}
	hash := opts.ApprovedHash
	if hash == "" {
		if hash, err = contracts.Hash(*c); err != nil {
			return iostreams.Failed(err)
		}
	}
	exp := policy.Expectation{
		ContractHash: hash, ImplementationSHA: opts.SHA, VerifierPublicKey: pub, VerifierDigest: c.Verifier.Digest,
		Build: contracts.BuildResult{Passed: !opts.BuildFailed}, Gate: contracts.GateResult{Source: "page-errors"},
	}
	d := policy.Decide(*c, exp, ev)
	if opts.JSON {
		if err := opts.IO.WriteJSON(d); err != nil {
			return err
		}
	} else {
		PrintDecision(opts.IO, d)
	}
	if opts.ExitStatus && d.Verdict != contracts.Satisfied {
		return iostreams.SilentExit(iostreams.ExitFailure)
	}
	return nil
}

// PrintDecision writes a decision for people: the verdict, then one line per reason.
func PrintDecision(io *iostreams.IO, d policy.Decision) {
	io.Printf("verdict: %s\n", d.Verdict)
	for _, r := range d.Reasons {
		io.Printf("  rule %d %s: %s\n", r.Rule, r.Code, r.Message)
	}
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
