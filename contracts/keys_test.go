package contracts_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// The fingerprint is the sha256 of the raw key, and a typed copy in any case parses back to it.
func TestKeyFingerprint(t *testing.T) {
	pub := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	sum := sha256.Sum256(pub)
	want := "sha256:" + hex.EncodeToString(sum[:])
	fp := contracts.KeyFingerprint(pub)
	if fp != want {
		t.Fatalf("fingerprint %s, want %s", fp, want)
	}
	if got, err := contracts.ParseKeyFingerprint("  SHA256:" + strings.ToUpper(fp[7:]) + "\n"); err != nil || got != fp {
		t.Fatalf("parse upper case: %q %v", got, err)
	}
	for _, bad := range []string{"", fp[7:], "sha256:abc", "md5:" + fp[7:], fp + "00", "sha256:" + strings.Repeat("g", 64)} {
		if _, err := contracts.ParseKeyFingerprint(bad); err == nil {
			t.Errorf("%q parsed as a fingerprint", bad)
		}
	}
	if contracts.KeyFingerprint(pub[:31]) != "" {
		t.Error("a short key has a fingerprint")
	}
}
