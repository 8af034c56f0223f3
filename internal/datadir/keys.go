package datadir

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/signing"
)

// PublishedKeys are the public keys a deployment's workers wrote into its data dir
// (keys/verifier.key.pub, keys/control.key.pub) with their fingerprints: what a reader of a
// proof compares its signers with. A key no worker has written yet is left empty.
type PublishedKeys struct {
	VerifierPath        string            `json:"verifier_public_key"`
	ControlPath         string            `json:"control_public_key"`
	VerifierFingerprint string            `json:"verifier_fingerprint,omitempty"`
	ControlFingerprint  string            `json:"control_fingerprint,omitempty"`
	Verifier            ed25519.PublicKey `json:"-"`
	Control             ed25519.PublicKey `json:"-"`
}

// ReadPublishedKeys reads the data dir's public keys. Missing files are not an error (the
// worker has not started yet); a file that holds no public key is.
func ReadPublishedKeys(dataDir string) (PublishedKeys, error) {
	dir := Paths(dataDir).Keys
	k := PublishedKeys{VerifierPath: filepath.Join(dir, VerifierKeyFile) + ".pub", ControlPath: filepath.Join(dir, ControlKeyFile) + ".pub"}
	var errs []error
	read := func(priv string, pub *ed25519.PublicKey, fp *string) {
		key, err := signing.LoadPublic(filepath.Join(dir, priv))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, fmt.Errorf("%s.pub: %w", filepath.Join(dir, priv), err))
		default:
			*pub, *fp = key, contracts.KeyFingerprint(key)
		}
	}
	read(VerifierKeyFile, &k.Verifier, &k.VerifierFingerprint)
	read(ControlKeyFile, &k.Control, &k.ControlFingerprint)
	return k, errors.Join(errs...)
}

// ReadVerifier reads what a verify worker published in the data dir: its public key and the
// verifier digest beside it, what the workflow checks evidence against.
func ReadVerifier(dataDir string) (ed25519.PublicKey, string, error) {
	keyPath := filepath.Join(Paths(dataDir).Keys, VerifierKeyFile)
	pub, err := signing.LoadPublic(keyPath)
	if err != nil {
		return nil, "", fmt.Errorf("verifier public key (%s.pub): %w; start `signoff dev` (or a verify worker) with this data dir first", keyPath, err)
	}
	digest, err := os.ReadFile(keyPath + ".digest")
	if err != nil {
		return nil, "", fmt.Errorf("verifier digest: %w", err)
	}
	return pub, strings.TrimSpace(string(digest)), nil
}
