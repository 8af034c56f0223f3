package keys_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/keys"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/signing"
)

// `signoff keys` prints both fingerprints, sha256 of the raw keys the workers wrote, with
// their paths; a data dir without keys exits 1 and says which is missing.
func TestKeysPrintsFingerprints(t *testing.T) {
	data := t.TempDir()
	dir := datadir.Paths(data).Keys
	var fps []string
	for _, name := range []string{datadir.VerifierKeyFile, datadir.ControlKeyFile} {
		priv, err := signing.LoadOrCreate(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := signing.WritePublic(filepath.Join(dir, name), priv); err != nil {
			t.Fatal(err)
		}
		fps = append(fps, contracts.KeyFingerprint(priv.Public().(ed25519.PublicKey)))
	}
	ios, out, _ := iostreams.Test()
	if err := keys.Run(&keys.Options{IO: ios, DataDir: data}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verifier " + fps[0], "control  " + fps[1], filepath.Join(dir, "verifier.key.pub"),
		"--verifier-fingerprint " + fps[0] + " --control-fingerprint " + fps[1]} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	ios, out, _ = iostreams.Test()
	if err := keys.Run(&keys.Options{IO: ios, DataDir: data, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var k datadir.PublishedKeys
	if err := json.Unmarshal(out.Bytes(), &k); err != nil || k.VerifierFingerprint != fps[0] || k.ControlFingerprint != fps[1] {
		t.Errorf("--json: %v %+v", err, k)
	}

	if err := os.Remove(filepath.Join(dir, "control.key.pub")); err != nil {
		t.Fatal(err)
	}
	ios, out, _ = iostreams.Test()
	err := keys.Run(&keys.Options{IO: ios, DataDir: data})
	var ee *iostreams.ExitError
	if !errors.As(err, &ee) || ee.Code != iostreams.ExitFailure || !strings.Contains(out.String(), "control  (none yet") {
		t.Errorf("missing control key: %v\n%s", err, out)
	}
}
