package envelope

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/chatbridge/identity"
)

type envelopeVector struct {
	Name           string
	PayloadJSON    *string `json:"payload_json"`
	EnvelopeJSON   string  `json:"envelope_json"`
	DigestPreimage string  `json:"digest_preimage_hex"`
	DigestHex      string  `json:"digest_hex"`
	SignatureLowS  string  `json:"signature_low_s"`
	SignatureHighS string  `json:"signature_high_s_equivalent"`
}

func loadEnvelopeVectors(t *testing.T) []envelopeVector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "envelopes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors []envelopeVector }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) != 3 {
		t.Fatalf("expected 3 envelope vectors, got %d", len(f.Vectors))
	}
	return f.Vectors
}

func seeds(t *testing.T) map[string]*identity.Identity {
	t.Helper()
	out := map[string]*identity.Identity{}
	for _, s := range []string{"alice recovery password", "bob recovery password"} {
		id, err := identity.FromSeed(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[id.Address()] = id
	}
	return out
}

func TestEnvelopeVectors(t *testing.T) {
	ids := seeds(t)
	for _, v := range loadEnvelopeVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			env, err := Decode([]byte(v.EnvelopeJSON))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			// JSON round trip is byte-exact.
			out, err := env.Encode()
			if err != nil || string(out) != v.EnvelopeJSON {
				t.Fatalf("Encode:\n got %s\nwant %s", out, v.EnvelopeJSON)
			}
			// Payload is base64 of exactly the message JSON.
			payload, err := env.DecodePayload()
			if err != nil {
				t.Fatal(err)
			}
			if v.PayloadJSON == nil {
				if env.Payload != nil || len(payload) != 0 {
					t.Fatalf("payload should be absent")
				}
			} else if string(payload) != *v.PayloadJSON {
				t.Fatalf("payload = %s, want %s", payload, *v.PayloadJSON)
			}
			// Preimage as documented, built independently here.
			pre := env.Sender + env.Target + env.Session + env.SchemaDigest
			if env.Payload != nil {
				pre += *env.Payload
			}
			preBytes := []byte(pre)
			for _, n := range []*int64{env.Expires, env.Nonce} {
				if n != nil {
					preBytes = binary.BigEndian.AppendUint64(preBytes, uint64(*n))
				}
			}
			if hex.EncodeToString(preBytes) != v.DigestPreimage {
				t.Fatalf("preimage mismatch")
			}
			sum := sha256.Sum256(preBytes)
			d, err := env.Digest()
			if err != nil || hex.EncodeToString(d) != v.DigestHex || hex.EncodeToString(sum[:]) != v.DigestHex {
				t.Fatalf("digest = %x (%v), want %s", d, err, v.DigestHex)
			}
			// Deterministic signature reproduced byte for byte by the sender's key.
			id := ids[env.Sender]
			if id == nil {
				t.Fatalf("unknown sender %s", env.Sender)
			}
			fresh := *env
			fresh.Signature = nil
			if err := fresh.Sign(id); err != nil || *fresh.Signature != v.SignatureLowS {
				t.Fatalf("Sign = %v (%v), want %s", fresh.Signature, err, v.SignatureLowS)
			}
			for _, sig := range []string{v.SignatureLowS, v.SignatureHighS} {
				e := *env
				e.Signature = &sig
				if err := e.Verify(); err != nil {
					t.Fatalf("Verify(%s...): %v", sig[:12], err)
				}
			}
			// Any covered field change breaks the signature; uncovered ones do not.
			tampered := *env
			tampered.SchemaDigest += "0"
			if err := tampered.Verify(); !errors.Is(err, identity.ErrBadSignature) {
				t.Fatalf("tampered schema digest verified: %v", err)
			}
			uncovered := *env
			uncovered.Version = 7
			uncovered.ProtocolDigest = nil
			if err := uncovered.Verify(); err != nil {
				t.Fatalf("version/protocol_digest should not be covered: %v", err)
			}
		})
	}
}

func TestNewAndSessionCanonicalisation(t *testing.T) {
	ids := seeds(t)
	var alice, bob *identity.Identity
	for _, id := range ids {
		if strings.HasPrefix(id.Address(), "agent1qf5") {
			alice = id
		} else {
			bob = id
		}
	}
	e, err := New(alice.Address(), bob.Address(), "D3B1A7B0-5F3E-4C7A-9D2E-1A2B3C4D5E6F", "model:x", []byte(`{"a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Session != "d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f" || e.Version != 1 {
		t.Fatalf("session not canonical: %+v", e)
	}
	if err := e.Verify(); !errors.Is(err, ErrSignatureMissing) || err.Error() != "Envelope signature is missing" {
		t.Fatalf("unsigned: %v", err)
	}
	if err := e.Sign(alice); err != nil {
		t.Fatal(err)
	}
	if err := e.Verify(); err != nil {
		t.Fatal(err)
	}
	neg := int64(-1)
	e.Expires = &neg
	if err := e.Verify(); err == nil || err.Error() != "int too large to convert" {
		t.Fatalf("negative expires: %v", err)
	}
	if _, err := New("a", "b", "6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b", "model:x", nil); err == nil {
		t.Fatal("v1 session accepted")
	}
}

func TestDecodeErrorsLikeReference(t *testing.T) {
	const ok = `"sender":"a","target":"b","schema_digest":"x"`
	cases := []struct {
		body string
		want error
	}{
		{``, ErrInvalidJSON},
		{`{"version":1,`, ErrInvalidJSON},
		{"\xff", ErrInvalidJSON},
		{`[]`, ErrSchema},
		{`{"version":1,` + ok + `}`, ErrSchema}, // no session
		{`{"version":1,"session":"6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b",` + ok + `}`, ErrSchema},
		{`{"version":1.5,"session":"d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f",` + ok + `}`, ErrSchema},
		{`{"version":1,"session":"d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f","sender":5,"target":"b","schema_digest":"x"}`, ErrSchema},
		{`{"version":1,"session":"d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f",` + ok + `,"expires":"soon"}`, ErrSchema},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.body))
		if !errors.Is(err, c.want) {
			t.Errorf("Decode(%q) = %v, want %v", c.body, err, c.want)
		}
	}
	// Lax values pydantic accepts, extra keys ignored.
	e, err := Decode([]byte(`{"version":"1","session":"d3b1a7b05f3e4c7a9d2e1a2b3c4d5e6f",` + ok + `,"expires":5.0,"extra":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := e.Encode()
	want := `{"version":1,"sender":"a","target":"b","session":"d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f","schema_digest":"x","protocol_digest":null,"payload":null,"expires":5,"nonce":null,"signature":null}`
	if string(out) != want {
		t.Fatalf("got %s", out)
	}
}
