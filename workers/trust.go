package workers

import (
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/workflows"
)

// ReadTrust reads what a verify worker published in the data dir (its public key and
// digest) as the trust the workflow checks evidence against.
func ReadTrust(dataDir string) (workflows.Trust, error) {
	pub, digest, err := datadir.ReadVerifier(dataDir)
	if err != nil {
		return workflows.Trust{}, err
	}
	return workflows.Trust{VerifierPublicKey: pub, VerifierDigest: digest}, nil
}
