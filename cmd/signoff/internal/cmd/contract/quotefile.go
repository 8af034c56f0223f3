package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/contracts"
)

// QuoteFile is what `contract new` writes beside the contract it offers: the price, how
// long the offer stands, and what the base check found. `contract start` reads it, refuses a
// quote that expired or belongs to another contract or requester, and hands the expiry to the
// workflow as its approval deadline.
type QuoteFile struct {
	Version      int                  `json:"version"`
	ContractID   string               `json:"contract_id"`
	ContractHash string               `json:"contract_hash"`
	Requester    string               `json:"requester"`
	Estimate     pricing.Estimate     `json:"quote"`
	BaseCheck    *contracts.BaseCheck `json:"base_check,omitempty"`
	// VerifierKeyFingerprint and ControlKeyFingerprint (contracts.KeyFingerprint) name the keys
	// the deployment that quoted will sign the proof with, so the requester knows before
	// approving which keys to check it against. Empty: not yet published in the data dir
	// (quotes written before these fields load the same way).
	VerifierKeyFingerprint string `json:"verifier_key_fingerprint,omitempty"`
	ControlKeyFingerprint  string `json:"control_key_fingerprint,omitempty"`
}

// QuotePath is the quote file beside a contract file: x.contract.json -> x.quote.json.
func QuotePath(contractFile string) string {
	for _, ext := range []string{".contract.json", ".json"} {
		if strings.HasSuffix(contractFile, ext) {
			return strings.TrimSuffix(contractFile, ext) + ".quote.json"
		}
	}
	return contractFile + ".quote.json"
}

// LoadQuote reads a quote file; a missing file is (nil, nil).
func LoadQuote(path string) (*QuoteFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := contracts.CheckJSON(data, path, contracts.MaxQuoteBytes, contracts.MaxJSONDepth); err != nil {
		return nil, err
	}
	var q QuoteFile
	if err := json.Unmarshal(data, &q); err != nil || q.Version != 1 {
		return nil, fmt.Errorf("%s is not a Signoff quote file (version 1): %v", path, err)
	}
	return &q, nil
}

// Check says why q cannot quote the contract with hash for requester at now.
func (q *QuoteFile) Check(path, hash, requester string, now time.Time) error {
	switch {
	case q.ContractHash != hash:
		return fmt.Errorf("%s quotes contract hash %s, but the contract file hashes to %s: it changed after it was quoted; run `signoff contract new` again (or pass --quote none to start it unquoted)",
			path, contracts.ShortSHA(q.ContractHash), contracts.ShortSHA(hash))
	case q.Requester != requester:
		return fmt.Errorf("%s was quoted to %q, not %q; start it as --requester %s", path, q.Requester, requester, q.Requester)
	case q.Estimate.Expired(now):
		return fmt.Errorf("the quote in %s expired at %s; run `signoff contract new` again for a fresh quote", path, q.Estimate.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}
