package contracts

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// FingerprintPrefix starts every key fingerprint, naming the hash so the format can grow.
const FingerprintPrefix = "sha256:"

// KeyFingerprint is how Signoff names a public key wherever a reader compares one (the
// `signoff keys` output, PR comments, quotes, the agent README, `proof verify`): "sha256:"
// and the lowercase hex sha256 of the raw 32-byte ed25519 key. The raw key, not its PEM or
// DER, so the same key always has one fingerprint however it was stored.
func KeyFingerprint(pub ed25519.PublicKey) string {
	if len(pub) != ed25519.PublicKeySize {
		return ""
	}
	sum := sha256.Sum256(pub)
	return FingerprintPrefix + hex.EncodeToString(sum[:])
}

// ParseKeyFingerprint checks a fingerprint a reader typed and returns it in KeyFingerprint's
// form (the hex lowercased), so a copy from a PR comment compares equal.
func ParseKeyFingerprint(s string) (string, error) {
	t := strings.TrimSpace(s)
	hexPart, ok := strings.CutPrefix(strings.ToLower(t), FingerprintPrefix)
	if !ok {
		return "", fmt.Errorf("key fingerprint %q: want %s<64 hex digits>", s, FingerprintPrefix)
	}
	if b, err := hex.DecodeString(hexPart); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("key fingerprint %q: want %s followed by %d hex digits", s, FingerprintPrefix, 2*sha256.Size)
	}
	return FingerprintPrefix + hexPart, nil
}
