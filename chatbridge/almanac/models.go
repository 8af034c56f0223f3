// Package almanac speaks the Almanac API that maps agent addresses to endpoints: signed
// registration attestations and status updates (uagents_core/registration.py), a resolver
// client, and a small local registry serving the same routes, so agents on one machine (the
// terminal chat client, test peers) find each other without Agentverse.
package almanac

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/pyjson"
)

// Endpoint is an AgentEndpoint: where envelopes for an agent are POSTed, with a weight for
// random selection.
type Endpoint struct {
	URL    string `json:"url"`
	Weight int    `json:"weight"`
}

// Attestation is an AgentRegistrationAttestation (POST /v1/almanac/agents). Field order is the
// reference's JSON order.
type Attestation struct {
	AgentIdentifier string     `json:"agent_identifier"` // agent://agent1... or a bare address
	Signature       *string    `json:"signature"`
	Timestamp       *int64     `json:"timestamp"`
	Protocols       []string   `json:"protocols"`
	Endpoints       []Endpoint `json:"endpoints"`
	// Metadata is dict[str, str | list[str] | dict[str, str]] | None; nil is null.
	Metadata any `json:"metadata"`
}

// StatusUpdate is an AgentStatusUpdate (POST /v1/almanac/agents/{address}/status).
type StatusUpdate struct {
	AgentIdentifier string  `json:"agent_identifier"`
	Signature       *string `json:"signature"`
	Timestamp       *int64  `json:"timestamp"`
	IsActive        bool    `json:"is_active"`
}

// fields is model_dump(exclude={"signature"}) for the VerifiableModel digest.
func (a *Attestation) fields() pyjson.Obj {
	eps := make([]any, len(a.Endpoints))
	for i, e := range a.Endpoints {
		eps[i] = pyjson.Obj{{K: "url", V: e.URL}, {K: "weight", V: e.Weight}}
	}
	protos := make([]any, len(a.Protocols))
	for i, p := range a.Protocols {
		protos[i] = p
	}
	return pyjson.Obj{
		{K: "agent_identifier", V: a.AgentIdentifier},
		{K: "timestamp", V: optInt(a.Timestamp)},
		{K: "protocols", V: protos},
		{K: "endpoints", V: eps},
		{K: "metadata", V: a.Metadata},
	}
}

func (s *StatusUpdate) fields() pyjson.Obj {
	return pyjson.Obj{
		{K: "agent_identifier", V: s.AgentIdentifier},
		{K: "timestamp", V: optInt(s.Timestamp)},
		{K: "is_active", V: s.IsActive},
	}
}

func optInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Digest is sha256(json.dumps(model_dump(exclude={"signature"}), sort_keys=True,
// separators=(",", ":"))), as VerifiableModel._build_digest.
func (a *Attestation) Digest() ([]byte, []byte, error) { return digest(a.fields()) }

// Digest is the VerifiableModel digest of the status update.
func (s *StatusUpdate) Digest() ([]byte, []byte, error) { return digest(s.fields()) }

func digest(o pyjson.Obj) (sum, preimage []byte, err error) {
	preimage, err = pyjson.Marshal(o, pyjson.CompactSorted)
	if err != nil {
		return nil, nil, fmt.Errorf("almanac: digest: %w", err)
	}
	d := sha256.Sum256(preimage)
	return d[:], preimage, nil
}

// Sign stamps the attestation with now (unix seconds) and signs it, as VerifiableModel.sign.
func (a *Attestation) Sign(id *identity.Identity, now time.Time) error {
	ts := now.Unix()
	a.Timestamp = &ts
	d, _, err := a.Digest()
	if err != nil {
		return err
	}
	sig, err := id.SignDigest(d)
	if err != nil {
		return fmt.Errorf("almanac: sign attestation: %w", err)
	}
	a.Signature = &sig
	return nil
}

// Sign stamps and signs the status update.
func (s *StatusUpdate) Sign(id *identity.Identity, now time.Time) error {
	ts := now.Unix()
	s.Timestamp = &ts
	d, _, err := s.Digest()
	if err != nil {
		return err
	}
	sig, err := id.SignDigest(d)
	if err != nil {
		return fmt.Errorf("almanac: sign status: %w", err)
	}
	s.Signature = &sig
	return nil
}

// Address is the agent address inside the identifier.
func (a *Attestation) Address() string {
	_, _, addr := identity.ParseIdentifier(a.AgentIdentifier)
	return addr
}

// Address is the agent address inside the identifier.
func (s *StatusUpdate) Address() string {
	_, _, addr := identity.ParseIdentifier(s.AgentIdentifier)
	return addr
}

// Verify checks the signature against the identifier's address (VerifiableModel.verify).
func (a *Attestation) Verify() error { return verify(a.Address(), a.Signature, a.Digest) }

// Verify checks the signature against the identifier's address.
func (s *StatusUpdate) Verify() error { return verify(s.Address(), s.Signature, s.Digest) }

func verify(addr string, sig *string, dig func() ([]byte, []byte, error)) error {
	if sig == nil {
		return errors.New("almanac: signature missing")
	}
	d, _, err := dig()
	if err != nil {
		return err
	}
	if err := identity.VerifyDigest(addr, d, *sig); err != nil {
		return fmt.Errorf("almanac: %w", err)
	}
	return nil
}

// Encode writes the request body as pydantic's model_dump_json: compact, declared order.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("almanac: encode: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeAttestation parses a request body leniently like pydantic: agent_address is accepted
// as an alias, unknown keys are ignored, metadata is kept as generic JSON.
func decodeAttestation(data []byte) (*Attestation, error) {
	var raw struct {
		AgentIdentifier *string         `json:"agent_identifier"`
		AgentAddress    *string         `json:"agent_address"`
		Signature       *string         `json:"signature"`
		Timestamp       *int64          `json:"timestamp"`
		Protocols       []string        `json:"protocols"`
		Endpoints       []Endpoint      `json:"endpoints"`
		Metadata        json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("almanac: attestation: %w", err)
	}
	a := &Attestation{Signature: raw.Signature, Timestamp: raw.Timestamp, Protocols: raw.Protocols, Endpoints: raw.Endpoints}
	switch {
	case raw.AgentIdentifier != nil:
		a.AgentIdentifier = *raw.AgentIdentifier
	case raw.AgentAddress != nil:
		a.AgentIdentifier = *raw.AgentAddress
	default:
		return nil, errors.New("almanac: attestation: agent_identifier missing")
	}
	if raw.Protocols == nil || raw.Endpoints == nil {
		return nil, errors.New("almanac: attestation: protocols and endpoints are required")
	}
	if len(raw.Metadata) > 0 && string(raw.Metadata) != "null" {
		md, err := pyjson.Decode(raw.Metadata)
		if err != nil {
			return nil, err
		}
		a.Metadata = md
	}
	return a, nil
}

func decodeStatus(data []byte) (*StatusUpdate, error) {
	var raw struct {
		AgentIdentifier *string `json:"agent_identifier"`
		AgentAddress    *string `json:"agent_address"`
		Signature       *string `json:"signature"`
		Timestamp       *int64  `json:"timestamp"`
		IsActive        *bool   `json:"is_active"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("almanac: status: %w", err)
	}
	s := &StatusUpdate{Signature: raw.Signature, Timestamp: raw.Timestamp}
	switch {
	case raw.AgentIdentifier != nil:
		s.AgentIdentifier = *raw.AgentIdentifier
	case raw.AgentAddress != nil:
		s.AgentIdentifier = *raw.AgentAddress
	default:
		return nil, errors.New("almanac: status: agent_identifier missing")
	}
	if raw.IsActive == nil {
		return nil, errors.New("almanac: status: is_active missing")
	}
	s.IsActive = *raw.IsActive
	return s, nil
}
