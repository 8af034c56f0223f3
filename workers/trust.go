package workers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/workflows"
)

// ReadTrust reads what a verify worker published in the data dir (its public key and
// digest): what the workflow checks evidence against.
func ReadTrust(dataDir string) (workflows.Trust, error) {
	keyPath := filepath.Join(Paths(dataDir).Keys, VerifierKeyFile)
	pub, err := signing.LoadPublic(keyPath)
	if err != nil {
		return workflows.Trust{}, fmt.Errorf("verifier public key (%s.pub): %w; start `signoff dev` (or a verify worker) with this data dir first", keyPath, err)
	}
	digest, err := os.ReadFile(keyPath + ".digest")
	if err != nil {
		return workflows.Trust{}, fmt.Errorf("verifier digest: %w", err)
	}
	return workflows.Trust{VerifierPublicKey: pub, VerifierDigest: strings.TrimSpace(string(digest))}, nil
}
