// Package signing keeps Signoff's ed25519 keys on disk: the verifier's (evidence) and the
// control worker's (bundles). Private keys are PEM PKCS #8 files of mode 0600; a key file
// others can read is refused rather than used.
package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadOrCreate returns the key in path, creating it (and its folder, mode 0700) when missing.
// Concurrent creators agree on one key: the file is linked into place, never overwritten.
func LoadOrCreate(path string) (ed25519.PrivateKey, error) {
	key, err := Load(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("key %s: generate: %w", path, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("key %s: write: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Load(path)
		}
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return priv, nil
}

// Load reads a private key file.
func Load(path string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key %s is accessible to other users (mode %04o): chmod 600 it", path, st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("key %s: not a PEM \"PRIVATE KEY\" block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("key %s: a %T, not ed25519", path, k)
	}
	return priv, nil
}

// PublicPEM exports a public key as PEM (PKIX "PUBLIC KEY").
func PublicPEM(pub ed25519.PublicKey) ([]byte, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePublicPEM reads a PEM public key.
func ParsePublicPEM(data []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM \"PUBLIC KEY\" block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not ed25519", k)
	}
	return pub, nil
}

// WritePublic writes the public half of key next to it as <path>.pub, so processes that only
// check signatures never open the private file.
func WritePublic(path string, key ed25519.PrivateKey) (string, error) {
	b, err := PublicPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return "", err
	}
	pubPath := path + ".pub"
	return pubPath, os.WriteFile(pubPath, b, 0o644)
}

// LoadPublic reads <path>.pub.
func LoadPublic(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		return nil, err
	}
	return ParsePublicPEM(b)
}

// LoadOrCreateSeed returns the secret seed in path (an identity seed, such as the chat agent's),
// creating a random 32-byte hex seed (mode 0600, folder 0700) when the file does not exist. A
// seed shorter than minLen is refused. Concurrent creators agree on one seed.
func LoadOrCreateSeed(path string, minLen int) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		seed := strings.TrimSpace(string(b))
		if len(seed) < minLen || seed == "" {
			return "", fmt.Errorf("%s holds a seed shorter than %d characters", path, minLen)
		}
		return seed, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	seed := hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateSeed(path, minLen) // another process made it first
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(seed + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return seed, f.Close()
}
