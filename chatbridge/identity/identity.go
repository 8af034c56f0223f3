// Package identity holds an agent's secp256k1 key as the uAgents reference derives, addresses
// and signs with it (uagents_core/identity.py), so a Go agent and a Python peer recognise each
// other's addresses and signatures.
package identity

//lint:file-ignore ST1005 error texts reproduce the reference exceptions, which peers receive verbatim

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Address and signature conventions of the reference (uagents_core/config.py, identity.py).
const (
	AgentHRP      = "agent" // bech32 human-readable part of agent addresses
	SignatureHRP  = "sig"   // bech32 human-readable part of signatures
	UserPrefix    = "user"  // unsigned (user) senders; never signature-checked
	AddressLength = 65      // AGENT_ADDRESS_LENGTH

	MainnetPrefix = "agent"      // identifier prefix, agent://agent1...
	TestnetPrefix = "test-agent" // identifier prefix, test-agent://agent1...
)

// Errors carrying the reference's exception texts: the HTTP layer reports str(exception)
// to the sender verbatim, so the wording is part of the wire contract.
var (
	ErrDecode           = errors.New("Unable to decode value")
	ErrConvert          = errors.New("Unable to convert value")
	ErrNotAgentAddress  = errors.New("Unable to decode agent address")
	ErrNotSignature     = errors.New("Unable to decode signature")
	ErrBadSignature     = errors.New("Signature verification failed")
	ErrMalformedAddress = errors.New("Encoding does not correspond to a point on curve")
)

// Identity is an agent key pair. The zero value is not usable; build one with FromSeed,
// FromPrivateKeyHex or Generate.
type Identity struct {
	key     *secp256k1.PrivateKey
	pub     []byte // 33-byte compressed public key
	address string
}

// FromSeed derives the key exactly as derive_key_from_seed(seed, "agent", index):
// sha256(sha256("agent" || index) || sha256(utf8(seed))). Agent(seed=...) uses index 0.
func FromSeed(seed string, index int) (*Identity, error) {
	if index < 0 || index > 255 {
		return nil, fmt.Errorf("identity: key index %d outside 0..255", index)
	}
	k1 := sha256.Sum256(append([]byte(AgentHRP), byte(index)))
	k2 := sha256.Sum256([]byte(seed))
	key := sha256.Sum256(append(k1[:], k2[:]...))
	return fromScalar(key[:])
}

// FromPrivateKeyHex loads a raw 32-byte private key (Identity.from_string in the reference).
func FromPrivateKeyHex(s string) (*Identity, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != 32 {
		return nil, errors.New("identity: private key must be 64 hex characters")
	}
	return fromScalar(b)
}

// Generate makes a fresh random identity (for throwaway clients).
func Generate() (*Identity, error) {
	var b [32]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("identity: random key: %w", err)
		}
		id, err := fromScalar(b[:])
		if err == nil {
			return id, nil
		}
	}
}

func fromScalar(b []byte) (*Identity, error) {
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(b); overflow || s.IsZero() {
		// python-ecdsa refuses such keys too; the chance is ~2^-128.
		return nil, errors.New("identity: private key outside the curve order")
	}
	key := secp256k1.NewPrivateKey(&s)
	pub := key.PubKey().SerializeCompressed()
	addr, err := encode(AgentHRP, pub)
	if err != nil {
		return nil, err
	}
	return &Identity{key: key, pub: pub, address: addr}, nil
}

// Address is the agent1... address (bech32 of the compressed public key).
func (id *Identity) Address() string { return id.address }

// PublicKey returns a copy of the 33-byte compressed public key.
func (id *Identity) PublicKey() []byte { return append([]byte(nil), id.pub...) }

// PrivateKeyHex exposes the raw key for persistence; never log it.
func (id *Identity) PrivateKeyHex() string {
	b := id.key.Key.Bytes()
	return hex.EncodeToString(b[:])
}

// Identifier is the network-qualified form used by the Almanac, e.g. agent://agent1...
func (id *Identity) Identifier(prefix string) string { return prefix + "://" + id.address }

// String never prints key material.
func (id *Identity) String() string { return id.address }

// SignDigest signs a pre-computed 32-byte digest and returns bech32("sig", r||s).
// RFC6979 nonces and low-s, so output is deterministic; the reference uses random k, which
// verifiers cannot tell apart.
func (id *Identity) SignDigest(digest []byte) (string, error) {
	if len(digest) != 32 {
		return "", fmt.Errorf("identity: digest must be 32 bytes, got %d", len(digest))
	}
	compact := ecdsa.SignCompact(id.key, digest, true) // [recovery code | r | s]
	return encode(SignatureHRP, compact[1:])
}

// Sign hashes data with sha256 and signs the digest (Identity.sign in the reference; used for
// identity challenges and attestation tokens).
func (id *Identity) Sign(data []byte) (string, error) {
	d := sha256.Sum256(data)
	return id.SignDigest(d[:])
}

// VerifyDigest checks signature (sig1...) over digest against an agent address.
// High-s signatures are accepted, as python-ecdsa does. Errors carry the reference's texts.
func VerifyDigest(address string, digest []byte, signature string) error {
	hrp, pub, err := decode(address)
	if err != nil {
		return err
	}
	sigHRP, sig, err := decode(signature)
	if err != nil {
		return err
	}
	if hrp != AgentHRP {
		return ErrNotAgentAddress
	}
	if sigHRP != SignatureHRP {
		return ErrNotSignature
	}
	key, err := secp256k1.ParsePubKey(pub)
	if err != nil || len(pub) != 33 {
		return ErrMalformedAddress
	}
	if len(sig) != 64 {
		return fmt.Errorf("Invalid length of signature, expected 64 bytes long, provided string is %d bytes long", len(sig))
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:]) || r.IsZero() || s.IsZero() {
		return ErrBadSignature
	}
	if len(digest) != 32 || !ecdsa.NewSignature(&r, &s).Verify(digest, key) {
		return ErrBadSignature
	}
	return nil
}

// PublicKeyFromAddress returns the compressed public key an agent address encodes.
func PublicKeyFromAddress(address string) ([]byte, error) {
	hrp, pub, err := decode(address)
	if err != nil {
		return nil, err
	}
	if hrp != AgentHRP {
		return nil, ErrNotAgentAddress
	}
	if _, err := secp256k1.ParsePubKey(pub); err != nil || len(pub) != 33 {
		return nil, ErrMalformedAddress
	}
	return pub, nil
}

// AddressFromPublicKey encodes a 33-byte compressed public key as an agent address.
func AddressFromPublicKey(pub []byte) (string, error) {
	if _, err := secp256k1.ParsePubKey(pub); err != nil || len(pub) != 33 {
		return "", ErrMalformedAddress
	}
	return encode(AgentHRP, pub)
}

// IsUserAddress mirrors is_user_address: anything starting with "user" is an unsigned sender.
func IsUserAddress(address string) bool { return strings.HasPrefix(address, UserPrefix) }

// IsValidAddress mirrors is_valid_address (a shape check, not a checksum check).
func IsValidAddress(address string) bool {
	return IsUserAddress(address) || (len(address) == AddressLength && strings.HasPrefix(address, AgentHRP))
}

// IsAgentAddress reports whether address is a well-formed agent address with a valid
// checksum and public key: stricter than IsValidAddress, used before trusting an address.
func IsAgentAddress(address string) bool {
	_, err := PublicKeyFromAddress(address)
	return err == nil && len(address) == AddressLength
}

// ParseIdentifier splits "prefix://name/address" like parse_identifier.
func ParseIdentifier(identifier string) (prefix, name, address string) {
	if before, after, ok := strings.Cut(identifier, "://"); ok {
		prefix, identifier = before, after
	}
	if before, after, ok := strings.Cut(identifier, "/"); ok {
		name, identifier = before, after
	}
	if IsValidAddress(identifier) {
		address = identifier
	} else {
		name = identifier
	}
	return prefix, name, address
}

// NewUserAddress makes a user... address (generate_user_address): bech32 of 32 random bytes.
func NewUserAddress() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("identity: random user address: %w", err)
	}
	return encode(UserPrefix, b[:])
}

func encode(hrp string, data []byte) (string, error) {
	conv, err := bech32.ConvertBits(data, 8, 5, true)
	if err != nil {
		return "", fmt.Errorf("identity: bech32 convert: %w", err)
	}
	s, err := bech32.Encode(hrp, conv)
	if err != nil {
		return "", fmt.Errorf("identity: bech32 encode: %w", err)
	}
	return s, nil
}

// decode follows the reference's _decode_bech32: bech32 (not bech32m) checksum, no 90-char
// limit (signatures are 113 characters), then 5->8 bit conversion without padding.
func decode(s string) (string, []byte, error) {
	hrp, data, version, err := bech32.DecodeNoLimitWithVersion(s)
	if err != nil || version != bech32.Version0 || len(data) == 0 || hrp == "" {
		return "", nil, ErrDecode
	}
	conv, err := bech32.ConvertBits(data, 5, 8, false)
	if err != nil || len(conv) == 0 {
		return "", nil, ErrConvert
	}
	return hrp, conv, nil
}
