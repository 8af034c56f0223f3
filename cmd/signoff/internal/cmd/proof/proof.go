// Package proof holds `signoff proof verify|render|serve`: re-check a proof offline, write it
// as a static site, or serve it with the trace viewer on loopback.
package proof

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities/index"
	"github.com/signoff/signoff/activities/signing"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/web/proofpage"
	"github.com/signoff/signoff/workers"
)

// Keys are the public keys a proof is checked with, as files; empty means the data dir's.
type Keys struct {
	DataDir     string
	VerifierKey string
	ControlKey  string
}

func (k *Keys) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&k.DataDir, "data-dir", cmdutil.DefaultDataDir(), "Signoff's data dir (its keys/*.pub are the default keys)")
	f.StringVar(&k.VerifierKey, "verifier-key", "", "the verifier's public key: a PEM file, or base64/hex in a file (default <data-dir>/keys/verifier.key.pub)")
	f.StringVar(&k.ControlKey, "control-key", "", "the control worker's public key, as --verifier-key (default <data-dir>/keys/control.key.pub)")
}

// NewCmdProof groups the proof commands.
func NewCmdProof(io *iostreams.IO) *cobra.Command {
	cmd := &cobra.Command{Use: "proof", Short: "Verify, render and serve proof bundles"}
	cmd.AddCommand(NewCmdVerify(io, nil), NewCmdRender(io, nil), NewCmdServe(io, nil))
	return cmd
}

// load returns both keys. With required false, missing default key files mean "no keys"
// (nil, nil); a key named by a flag must always load.
func (k *Keys) load(required bool) (verifier, control ed25519.PublicKey, err error) {
	dir := workers.Paths(k.DataDir).Keys
	v, verr := loadKey(k.VerifierKey, filepath.Join(dir, workers.VerifierKeyFile), "--verifier-key")
	c, cerr := loadKey(k.ControlKey, filepath.Join(dir, workers.ControlKeyFile), "--control-key")
	if verr == nil && cerr == nil {
		return v, c, nil
	}
	missingDefault := func(err error, flag string) bool {
		return err == nil || (flag == "" && errors.Is(err, fs.ErrNotExist))
	}
	if !required && missingDefault(verr, k.VerifierKey) && missingDefault(cerr, k.ControlKey) {
		return nil, nil, nil
	}
	return nil, nil, iostreams.BadInput(errors.Join(verr, cerr))
}

// loadKey reads a public key file; flag empty means the default <path>.pub.
func loadKey(file, defaultKey, flag string) (ed25519.PublicKey, error) {
	if file == "" {
		pub, err := signing.LoadPublic(defaultKey)
		if err != nil {
			return nil, fmt.Errorf("%s: default %s.pub: %w (pass %s, or --data-dir)", flag, defaultKey, err, flag)
		}
		return pub, nil
	}
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
	p := workers.Paths(dataDir).Index
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	return index.Open(p)
}
