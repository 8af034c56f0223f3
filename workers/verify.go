package workers

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/internal/verify"
)

// VerifierTrust writes what the control plane must trust about this verifier: its public key
// (<key>.pub) and digest (<key>.digest).
func VerifierTrust(keyPath string, v *verify.Verifier) error {
	if _, err := signing.WritePublic(keyPath, v.Key); err != nil {
		return err
	}
	return os.WriteFile(keyPath+".digest", []byte(verify.Digest()+"\n"), 0o644)
}

// NewVerify builds the verify queue's activities: the browser verifier with its own key.
// Only this queue reads the verifier key.
func NewVerify(cfg Config, gate capability.Gate) (*activities.Verify, func(), error) {
	p := cfg.Layout()
	keyPath := filepath.Join(p.Keys, datadir.VerifierKeyFile)
	key, err := signing.LoadOrCreate(keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("verifier key: %w", err)
	}
	vcfg := verify.ConfigFrom(cfg.Settings.Browser)
	v := &verify.Verifier{Config: vcfg, Key: key, Source: verify.SourceFor(vcfg, cfg.Settings.Browser), BaseBrowsers: &verify.Pool{Linger: verify.BaseBrowserLinger}}
	if err := VerifierTrust(keyPath, v); err != nil {
		return nil, nil, err
	}
	stop := v.BaseBrowsers.Close
	if d, err := verify.StartDriver(vcfg); err == nil {
		v.Driver = d
		stop = func() { v.BaseBrowsers.Close(); _ = d.Stop() }
	} // else: Verify reports the setup error per call, as verification_error
	proofs := proofstore.Store{Root: p.Proofs}
	var verifier capability.Verifier = &verify.Activity{Verifier: v, Proofs: proofs}
	if share := cfg.proofShare(); share != nil {
		verifier = sharedVerifier{Verifier: verifier, proofs: proofs, share: share, key: key.Public().(ed25519.PublicKey), log: v.Logger}
	}
	return &activities.Verify{Verifier: verifier, Gate: gate}, stop, nil
}
