package contracts

import "crypto/ed25519"

// SettlementSchema names the settlement record's layout.
const SettlementSchema = "signoff.settlement/v1"

// settlementDomain keeps a settlement signature from being replayed as one over a bundle.
const settlementDomain = "signoff.settlement/v1\n"

// Settlement is the control worker's signed record of how a contract ended: the final
// verdict, what became of the payment (captured, or the authorization cancelled), and the
// last attempt's bundle it rests on. Bundles are signed before the payment settles, so
// without this record the final payment state would rest on the unsigned index.
type Settlement struct {
	SchemaVersion string `json:"schema_version"`
	ContractID    string `json:"contract_id"`
	ContractHash  string `json:"contract_hash"`
	// Verdict is the last attempt's verdict ("" when the contract ended before any).
	Verdict string `json:"verdict"`
	// State is the workflow's final state (payment_captured, merge_eligible, cancelled, ...).
	State   string     `json:"state"`
	Payment PaymentRef `json:"payment"`
	// Attempt and Try name the last verification; BundleDigest is the sha256 of its
	// bundle.json as written.
	Attempt      int    `json:"attempt"`
	Try          int    `json:"try"`
	BundleDigest string `json:"bundle_digest"`
	// Timeline is the whole hash chain up to settlement; it extends the last bundle's.
	Timeline     []Event `json:"timeline"`
	TimelineHead string  `json:"timeline_head"`
	Signature    string  `json:"signature,omitempty"`
}

// SigningBytes is what the control worker signs.
func (s Settlement) SigningBytes() ([]byte, error) {
	s.Signature = ""
	return signingMessage(settlementDomain, s)
}

// Sign sets the settlement signature.
func (s *Settlement) Sign(key ed25519.PrivateKey) (err error) {
	s.Signature, err = signWith(key, s.SigningBytes)
	return err
}

// VerifySignature checks the settlement signature against the control worker's public key.
func (s Settlement) VerifySignature(pub ed25519.PublicKey) error {
	return verifySig(pub, s.Signature, s.SigningBytes)
}
