// Package proof holds `signoff proof get|verify|render|serve`: copy a proof out of the
// artifact store, re-check it offline, write it as a static site, or serve it with the trace
// viewer on loopback.
package proof

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/web/proofpage"
)

// NewCmdProof groups the proof commands.
func NewCmdProof(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "proof", Short: "Get, verify, render and serve proof bundles"}
	cmd.AddCommand(NewCmdVerify(f, nil), NewCmdRender(f, nil), NewCmdServe(f, nil), NewCmdGet(f, nil))
	return cmd
}

// loadKey reads a public key file named by flag: PEM, or the raw key in hex or base64.
func loadKey(file, flag string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if block, _ := pem.Decode(data); block != nil {
		if strings.Contains(block.Type, "PRIVATE") {
			return nil, fmt.Errorf("%s: %s is a private key; pass its public half (the .pub file)", flag, file)
		}
		pub, err := signing.ParsePublicPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", flag, file, err)
		}
		return pub, nil
	}
	s := strings.TrimSpace(string(data))
	for _, dec := range []func(string) ([]byte, error){hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawURLEncoding.DecodeString} {
		if b, err := dec(s); err == nil && len(b) == ed25519.PublicKeySize {
			return ed25519.PublicKey(b), nil
		}
	}
	return nil, fmt.Errorf("%s: %s holds no ed25519 public key (PEM, or %d bytes in base64 or hex)", flag, file, ed25519.PublicKeySize)
}

// statusIndex is the data dir's contract index when it exists, for the pages' current state.
func statusIndex(dataDir string) proofpage.StatusSource {
	p := datadir.Paths(dataDir).Index
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	return index.Open(p)
}
