package signing

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "verifier.pem")
	k1, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %o, want 600", st.Mode().Perm())
	}
	k2, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Equal(k2) {
		t.Error("the key changed on reload")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".verifier-key-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	pemPub, err := PublicPEM(k1.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicPEM(pemPub)
	if err != nil || !pub.Equal(k1.Public()) {
		t.Fatalf("public key round trip: %v", err)
	}
	msg := []byte("evidence")
	if !ed25519.Verify(pub, msg, ed25519.Sign(k2, msg)) {
		t.Error("the reloaded key does not sign for the exported public key")
	}

	// A key readable by others is refused, and left as it was.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if _, err := LoadOrCreate(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a refused key file was modified")
	}

	bad := filepath.Join(t.TempDir(), "bad.pem")
	if err := os.WriteFile(bad, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(bad); err == nil {
		t.Error("garbage accepted as a key")
	}
	if _, err := ParsePublicPEM([]byte("nope")); err == nil {
		t.Error("garbage accepted as a public key")
	}
}
