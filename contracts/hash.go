package contracts

import "fmt"

// Hash returns contract_hash: the hex sha256 of the RFC 8785 canonical form of the terms.
// The Contract type holds only terms (approval, payment and status live elsewhere), so the
// whole value is hashed.
func Hash(c Contract) (string, error) {
	b, err := CanonicalJSON(c)
	if err != nil {
		return "", fmt.Errorf("contract hash: %w", err)
	}
	return DigestBytes(b), nil
}

// HashJSON hashes a contract document as written, after loading it, so that unknown or
// reordered members cannot change what was approved.
func HashJSON(data []byte, opts LoadOptions) (string, error) {
	c, err := Load(data, opts)
	if err != nil {
		return "", err
	}
	return Hash(*c)
}
