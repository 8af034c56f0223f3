// Package envelope is the uAgents message envelope (uagents_core/envelope.py): its JSON form,
// base64 payload, digest and signature. Field order, nulls and digest bytes match the
// reference exactly, since peers verify signatures over them.
package envelope

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/contracts"
)

// Envelope mirrors the reference model; nil pointers serialise as null, in this field order.
type Envelope struct {
	Version        int     `json:"version"`
	Sender         string  `json:"sender"`
	Target         string  `json:"target"`
	Session        string  `json:"session"` // canonical lower-case version-4 UUID
	SchemaDigest   string  `json:"schema_digest"`
	ProtocolDigest *string `json:"protocol_digest"`
	Payload        *string `json:"payload"`
	Expires        *int64  `json:"expires"`
	Nonce          *int64  `json:"nonce"`
	Signature      *string `json:"signature"`
}

// ErrInvalidJSON is a body that is not UTF-8 JSON ("empty or invalid payload" on the wire).
var ErrInvalidJSON = errors.New("empty or invalid payload")

// ErrSchema is JSON that does not validate as an Envelope ("contents do not match envelope
// schema" on the wire). Decode wraps it with the offending field.
var ErrSchema = errors.New("contents do not match envelope schema")

// ErrSignatureMissing is the reference's text for an unsigned agent envelope.
var ErrSignatureMissing = errors.New("Envelope signature is missing")

// New builds a version-1 envelope carrying payloadJSON (nil for no payload). The session is
// canonicalised; it must be a version-4 UUID.
func New(sender, target, session, schemaDigest string, payloadJSON []byte) (*Envelope, error) {
	s, err := uuid4.ParseEnvelope(session)
	if err != nil {
		return nil, fmt.Errorf("envelope: session %q: %w", session, err)
	}
	e := &Envelope{Version: 1, Sender: sender, Target: target, Session: s, SchemaDigest: schemaDigest}
	if payloadJSON != nil {
		e.SetPayload(payloadJSON)
	}
	return e, nil
}

// SetPayload stores base64(payloadJSON), standard alphabet with padding (encode_payload).
func (e *Envelope) SetPayload(payloadJSON []byte) {
	p := base64.StdEncoding.EncodeToString(payloadJSON)
	e.Payload = &p
}

// DecodePayload returns the message JSON ("" when there is no payload, as decode_payload).
// Like Python's non-validating b64decode, characters outside the alphabet are skipped; the
// result must be UTF-8.
func (e *Envelope) DecodePayload() ([]byte, error) {
	if e.Payload == nil {
		return []byte{}, nil
	}
	clean := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=' {
			return r
		}
		return -1
	}, *e.Payload)
	b, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return nil, fmt.Errorf("envelope: payload is not base64: %w", err)
	}
	if !utf8.Valid(b) {
		return nil, errors.New("envelope: payload is not UTF-8")
	}
	return b, nil
}

// Digest is sha256(sender || target || session || schema_digest || [payload base64 text] ||
// [u64be expires] || [u64be nonce]); version, protocol_digest and signature are not covered.
func (e *Envelope) Digest() ([]byte, error) {
	session, err := uuid4.ParseEnvelope(e.Session)
	if err != nil {
		return nil, fmt.Errorf("envelope: session: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(e.Sender))
	h.Write([]byte(e.Target))
	h.Write([]byte(session))
	h.Write([]byte(e.SchemaDigest))
	if e.Payload != nil {
		h.Write([]byte(*e.Payload))
	}
	for _, v := range []*int64{e.Expires, e.Nonce} {
		if v == nil {
			continue
		}
		if *v < 0 {
			// struct.pack(">Q", negative) raises this in CPython 3.11.
			return nil, errors.New("int too large to convert")
		}
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(*v))
		h.Write(b[:])
	}
	return h.Sum(nil), nil
}

// Sign sets the signature over Digest with id (the sender should be id's address).
func (e *Envelope) Sign(id *identity.Identity) error {
	d, err := e.Digest()
	if err != nil {
		return fmt.Errorf("envelope: sign: %w", err)
	}
	sig, err := id.SignDigest(d)
	if err != nil {
		return fmt.Errorf("envelope: sign: %w", err)
	}
	e.Signature = &sig
	return nil
}

// Verify checks the signature against the sender address. Its errors carry the reference's
// texts, which the HTTP layer returns to the sender.
func (e *Envelope) Verify() error {
	if e.Signature == nil {
		return ErrSignatureMissing
	}
	d, err := e.Digest()
	if err != nil {
		return err
	}
	return identity.VerifyDigest(e.Sender, d, *e.Signature)
}

// Encode writes the compact JSON pydantic's model_dump_json gives: field order kept, null for
// missing values, no HTML escaping.
func (e *Envelope) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("envelope: encode: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Decode parses an envelope as the reference's HTTP server does: invalid UTF-8 or JSON gives
// ErrInvalidJSON; anything pydantic would reject (missing fields, wrong types, a session that
// is not a version-4 UUID) gives an error wrapping ErrSchema. Unknown keys are ignored.
func Decode(data []byte) (*Envelope, error) {
	// Size and depth first: the checks below recurse, and the payload is decoded again later.
	if err := contracts.CheckJSON(data, "chat envelope", contracts.MaxChatBytes, contracts.MaxJSONDepth); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	if len(bytes.TrimSpace(data)) == 0 || !utf8.Valid(data) || !json.Valid(data) {
		return nil, ErrInvalidJSON
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: not an object", ErrSchema)
	}
	e := &Envelope{}
	var err error
	fail := func(field string, err error) (*Envelope, error) {
		return nil, fmt.Errorf("%w: %s: %v", ErrSchema, field, err)
	}
	if e.Version, err = laxInt(raw["version"], true); err != nil {
		return fail("version", err)
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"sender", &e.Sender}, {"target", &e.Target}, {"session", &e.Session}, {"schema_digest", &e.SchemaDigest}} {
		s, err := str(raw[f.name], true)
		if err != nil {
			return fail(f.name, err)
		}
		*f.dst = *s
	}
	if e.Session, err = uuid4.ParseEnvelope(e.Session); err != nil {
		return fail("session", err)
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"protocol_digest", &e.ProtocolDigest}, {"payload", &e.Payload}, {"signature", &e.Signature}} {
		if *f.dst, err = str(raw[f.name], false); err != nil {
			return fail(f.name, err)
		}
	}
	for _, f := range []struct {
		name string
		dst  **int64
	}{{"expires", &e.Expires}, {"nonce", &e.Nonce}} {
		msg, ok := raw[f.name]
		if !ok || string(msg) == "null" {
			continue
		}
		n, err := laxInt(msg, true)
		if err != nil {
			return fail(f.name, err)
		}
		v := int64(n)
		*f.dst = &v
	}
	return e, nil
}

// str reads a JSON string; absent or null is an error when required, else nil.
func str(msg json.RawMessage, required bool) (*string, error) {
	if msg == nil || string(msg) == "null" {
		if required {
			return nil, errors.New("field required")
		}
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(msg, &s); err != nil {
		return nil, errors.New("input should be a valid string")
	}
	return &s, nil
}

// laxInt follows pydantic v2's lax int: integers, integral floats, booleans and numeric
// strings are accepted.
func laxInt(msg json.RawMessage, required bool) (int, error) {
	if msg == nil || string(msg) == "null" {
		if required {
			return 0, errors.New("field required")
		}
		return 0, nil
	}
	switch t := string(msg); {
	case t == "true":
		return 1, nil
	case t == "false":
		return 0, nil
	case t[0] == '"':
		var s string
		if err := json.Unmarshal(msg, &s); err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, errors.New("input should be a valid integer")
		}
		return int(n), nil
	default:
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return int(n), nil
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || f != float64(int64(f)) {
			return 0, errors.New("input should be a valid integer")
		}
		return int(f), nil
	}
}
