package workers

import (
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/workflows/contractapi"
)

// ReadTrust reads what a verify worker published in the data dir (its public key and
// digest) as the trust the workflow checks evidence against.
func ReadTrust(dataDir string) (contractapi.Trust, error) {
	pub, digest, err := datadir.ReadVerifier(dataDir)
	if err != nil {
		return contractapi.Trust{}, err
	}
	return contractapi.Trust{VerifierPublicKey: pub, VerifierDigest: digest}, nil
}
