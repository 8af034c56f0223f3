package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadVectors(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", name))
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

func TestFromSeedVectors(t *testing.T) {
	var raw struct {
		Vectors []map[string]any
	}
	loadVectors(t, "identity.json", &raw)
	if len(raw.Vectors) != 5 {
		t.Fatalf("expected 5 identity vectors, got %d", len(raw.Vectors))
	}
	for _, v := range raw.Vectors {
		seed := v["seed"].(string)
		index := int(v["index"].(float64))
		t.Run(v["address"].(string), func(t *testing.T) {
			if got := hex.EncodeToString([]byte(seed)); got != v["seed_utf8_hex"] {
				t.Fatalf("seed utf8 = %s, want %s", got, v["seed_utf8_hex"])
			}
			k1 := sha256.Sum256(append([]byte("agent"), byte(index)))
			if hex.EncodeToString(k1[:]) != v["key_derivation_hash_hex"] {
				t.Errorf("k1 mismatch")
			}
			k2 := sha256.Sum256([]byte(seed))
			if hex.EncodeToString(k2[:]) != v["seed_hash_hex"] {
				t.Errorf("k2 mismatch")
			}
			id, err := FromSeed(seed, index)
			if err != nil {
				t.Fatal(err)
			}
			if id.PrivateKeyHex() != v["private_key_hex"] {
				t.Errorf("private key = %s, want %s", id.PrivateKeyHex(), v["private_key_hex"])
			}
			if got := hex.EncodeToString(id.PublicKey()); got != v["public_key_compressed_hex"] {
				t.Errorf("public key = %s, want %s", got, v["public_key_compressed_hex"])
			}
			if id.Address() != v["address"] || len(id.Address()) != int(v["address_length"].(float64)) {
				t.Errorf("address = %s, want %s", id.Address(), v["address"])
			}
			if got := id.Identifier(MainnetPrefix); got != v["mainnet_identifier"] {
				t.Errorf("mainnet identifier = %s", got)
			}
			if got := id.Identifier(TestnetPrefix); got != v["testnet_identifier"] {
				t.Errorf("testnet identifier = %s", got)
			}
			back, err := FromPrivateKeyHex(id.PrivateKeyHex())
			if err != nil || back.Address() != id.Address() {
				t.Errorf("FromPrivateKeyHex round trip: %v", err)
			}
			pub, err := PublicKeyFromAddress(id.Address())
			if err != nil || hex.EncodeToString(pub) != v["public_key_compressed_hex"] {
				t.Errorf("PublicKeyFromAddress: %v", err)
			}
			if !IsAgentAddress(id.Address()) || !IsValidAddress(id.Address()) {
				t.Errorf("address not recognised as valid")
			}
			p, _, a := ParseIdentifier(v["testnet_identifier"].(string))
			if p != TestnetPrefix || a != id.Address() {
				t.Errorf("ParseIdentifier = %q %q", p, a)
			}
		})
	}
	if _, err := FromSeed("x", 256); err == nil {
		t.Error("index 256 accepted")
	}
}

func TestSignatureVectors(t *testing.T) {
	var f struct {
		VerifyVectors []struct {
			Name, Address, Signature string
			DigestHex                string `json:"digest_hex"`
			Valid                    bool
		} `json:"verify_vectors"`
		HashThenSign struct {
			Address, Signature string
			DataUTF8           string `json:"data_utf8"`
			SHA256Hex          string `json:"sha256_hex"`
		} `json:"hash_then_sign_vector"`
	}
	loadVectors(t, "signatures.json", &f)
	if len(f.VerifyVectors) != 5 {
		t.Fatalf("expected 5 verify vectors, got %d", len(f.VerifyVectors))
	}
	alice, err := FromSeed("alice recovery password", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range f.VerifyVectors {
		t.Run(v.Name, func(t *testing.T) {
			if len(v.Signature) <= 90 {
				t.Fatalf("vector signature should exceed bech32's 90-char limit, len %d", len(v.Signature))
			}
			digest := mustHex(t, v.DigestHex)
			err := VerifyDigest(v.Address, digest, v.Signature)
			if v.Valid && err != nil {
				t.Fatalf("valid signature rejected: %v", err)
			}
			if !v.Valid && !errors.Is(err, ErrBadSignature) {
				t.Fatalf("invalid signature: err = %v, want %v", err, ErrBadSignature)
			}
			// Deterministic (RFC6979, low-s) vectors signed by alice must be reproduced byte for byte.
			if strings.Contains(v.Name, "RFC6979") && v.Address == alice.Address() {
				got, err := alice.SignDigest(digest)
				if err != nil || got != v.Signature {
					t.Fatalf("SignDigest = %s (%v), want %s", got, err, v.Signature)
				}
			}
		})
	}
	h := f.HashThenSign
	sum := sha256.Sum256([]byte(h.DataUTF8))
	if hex.EncodeToString(sum[:]) != h.SHA256Hex {
		t.Fatalf("sha256 mismatch")
	}
	got, err := alice.Sign([]byte(h.DataUTF8))
	if err != nil || got != h.Signature {
		t.Fatalf("Sign = %s (%v), want %s", got, err, h.Signature)
	}
	if err := VerifyDigest(h.Address, sum[:], h.Signature); err != nil {
		t.Fatalf("verify hash-then-sign: %v", err)
	}
}

func TestVerifyDigestErrorsMatchReference(t *testing.T) {
	alice, _ := FromSeed("alice recovery password", 0)
	bob, _ := FromSeed("bob recovery password", 0)
	digest := sha256.Sum256([]byte("hello there bob"))
	sig, err := alice.SignDigest(digest[:])
	if err != nil {
		t.Fatal(err)
	}
	user, err := NewUserAddress()
	if err != nil {
		t.Fatal(err)
	}
	sigAsAddr := "agent" + strings.TrimPrefix(sig, "sig") // wrong checksum: decode error
	cases := []struct {
		name, addr, sig string
		want            string
	}{
		{"garbage signature", alice.Address(), "sig1qqqq", "Unable to decode value"},
		{"corrupt address checksum", alice.Address()[:60] + "xxxxx", sig, "Unable to decode value"},
		{"user address as signer", user, sig, "Unable to decode agent address"},
		{"address given as signature", alice.Address(), alice.Address(), "Unable to decode signature"},
		{"wrong signer", bob.Address(), sig, "Signature verification failed"},
		{"mixed case", alice.Address(), strings.ToUpper(sig[:4]) + sig[4:], "Unable to decode value"},
		{"sig renamed", alice.Address(), sigAsAddr, "Unable to decode value"},
	}
	for _, c := range cases {
		err := VerifyDigest(c.addr, digest[:], c.sig)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// Upper-case signatures are valid bech32 and accepted by the reference.
	if err := VerifyDigest(alice.Address(), digest[:], strings.ToUpper(sig)); err != nil {
		t.Errorf("upper-case signature rejected: %v", err)
	}
	if !IsUserAddress(user) || !IsValidAddress(user) || IsAgentAddress(user) {
		t.Errorf("user address classification wrong for %s", user)
	}
}

func TestGenerateAndStringHideKey(t *testing.T) {
	id, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if id.String() != id.Address() || strings.Contains(id.String(), id.PrivateKeyHex()) {
		t.Fatal("String must print only the address")
	}
	d := sha256.Sum256([]byte("x"))
	s, err := id.SignDigest(d[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyDigest(id.Address(), d[:], s); err != nil {
		t.Fatalf("own signature rejected: %v", err)
	}
	if _, err := id.SignDigest([]byte("short")); err == nil {
		t.Fatal("short digest accepted")
	}
}
