package almanac

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/identity"
)

type signedVector struct {
	Preimage    string `json:"digest_preimage"`
	DigestHex   string `json:"digest_hex"`
	RequestBody string `json:"request_body"`
}

func loadRegistrationVectors(t *testing.T) (att, status signedVector) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "registration.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Attestation signedVector `json:"almanac_attestation"`
		Status      signedVector `json:"status_update"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Attestation, f.Status
}

func alice(t *testing.T) *identity.Identity {
	t.Helper()
	id, err := identity.FromSeed("alice recovery password", 0)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

const vectorTime = 1735787045

func TestAttestationVector(t *testing.T) {
	v, _ := loadRegistrationVectors(t)
	id := alice(t)
	a := &Attestation{
		AgentIdentifier: id.Identifier(identity.MainnetPrefix),
		Protocols:       []string{chatproto.ProtocolDigest},
		Endpoints:       []Endpoint{{URL: "https://agentverse.ai/v2/agents/mailbox/submit", Weight: 1}},
	}
	if err := a.Sign(id, time.Unix(vectorTime, 0)); err != nil {
		t.Fatal(err)
	}
	d, pre, err := a.Digest()
	if err != nil || string(pre) != v.Preimage || hex.EncodeToString(d) != v.DigestHex {
		t.Fatalf("digest preimage\n got %s\nwant %s", pre, v.Preimage)
	}
	body, err := Encode(a)
	if err != nil || string(body) != v.RequestBody {
		t.Fatalf("body\n got %s\nwant %s", body, v.RequestBody)
	}
	// The vector body, decoded, verifies; a changed endpoint does not.
	parsed, err := decodeAttestation([]byte(v.RequestBody))
	if err != nil {
		t.Fatal(err)
	}
	if err := parsed.Verify(); err != nil {
		t.Fatalf("vector attestation rejected: %v", err)
	}
	parsed.Endpoints[0].URL = "https://evil.example/submit"
	if err := parsed.Verify(); !errors.Is(err, identity.ErrBadSignature) {
		t.Fatalf("tampered attestation: %v", err)
	}
}

func TestStatusVector(t *testing.T) {
	_, v := loadRegistrationVectors(t)
	id := alice(t)
	s := &StatusUpdate{AgentIdentifier: id.Address(), IsActive: true}
	if err := s.Sign(id, time.Unix(vectorTime, 0)); err != nil {
		t.Fatal(err)
	}
	d, pre, _ := s.Digest()
	if string(pre) != v.Preimage || hex.EncodeToString(d) != v.DigestHex {
		t.Fatalf("status preimage\n got %s\nwant %s", pre, v.Preimage)
	}
	body, _ := Encode(s)
	if string(body) != v.RequestBody {
		t.Fatalf("status body\n got %s\nwant %s", body, v.RequestBody)
	}
	parsed, err := decodeStatus([]byte(v.RequestBody))
	if err != nil || parsed.Verify() != nil {
		t.Fatalf("vector status rejected: %v", err)
	}
}

func post(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRegistryRoutes(t *testing.T) {
	now := time.Unix(vectorTime, 0)
	reg := &Registry{Now: func() time.Time { return now }}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	id := alice(t)

	// Resolving before registration fails.
	res := &APIResolver{BaseURL: srv.URL + "/v1/almanac"}
	if _, err := res.Resolve(context.Background(), id.Address()); !errors.Is(err, ErrUnresolved) {
		t.Fatalf("unregistered resolve: %v", err)
	}

	a := &Attestation{AgentIdentifier: id.Identifier("agent"), Protocols: []string{chatproto.ProtocolDigest},
		Endpoints: []Endpoint{{URL: "http://127.0.0.1:1/submit", Weight: 1}, {URL: "http://127.0.0.1:2/submit", Weight: 3}}}
	_ = a.Sign(id, now)
	body, _ := Encode(a)
	if code, _ := post(t, srv.URL+"/v1/almanac/agents", body); code != 200 {
		t.Fatalf("register: %d", code)
	}
	urls, err := res.Resolve(context.Background(), id.Address())
	if err != nil || len(urls) != 2 {
		t.Fatalf("resolve: %v %v", urls, err)
	}
	withPrefix := &APIResolver{BaseURL: srv.URL + "/v1/almanac", Prefix: "test-agent"}
	if _, err := withPrefix.Resolve(context.Background(), id.Address()); !errors.Is(err, ErrUnresolved) {
		t.Fatalf("wrong prefix resolved: %v", err)
	}

	// Forged (someone else's key) and replayed-older attestations are refused; state intact.
	bob, _ := identity.FromSeed("bob recovery password", 0)
	forged := *a
	forged.Endpoints = []Endpoint{{URL: "http://127.0.0.1:9/evil", Weight: 1}}
	_ = forged.Sign(bob, now)
	fb, _ := Encode(&forged)
	if code, _ := post(t, srv.URL+"/v1/almanac/agents", fb); code != 400 {
		t.Fatalf("forged attestation: %d", code)
	}
	older := *a
	older.Endpoints = []Endpoint{{URL: "http://127.0.0.1:9/old", Weight: 1}}
	_ = older.Sign(id, now.Add(-time.Minute))
	ob, _ := Encode(&older)
	if code, _ := post(t, srv.URL+"/v1/almanac/agents", ob); code != 400 {
		t.Fatalf("older attestation: %d", code)
	}
	stale := *a
	_ = stale.Sign(id, now.Add(-time.Hour))
	sb, _ := Encode(&stale)
	if code, _ := post(t, srv.URL+"/v1/almanac/agents", sb); code != 400 {
		t.Fatalf("stale attestation: %d", code)
	}
	rec, _ := reg.Lookup(id.Address())
	if len(rec.Endpoints) != 2 || rec.Endpoints[0].URL != "http://127.0.0.1:1/submit" {
		t.Fatalf("record changed by refused requests: %+v", rec)
	}

	// Status: signed by the agent, path must match.
	s := &StatusUpdate{AgentIdentifier: id.Address(), IsActive: false}
	_ = s.Sign(id, now)
	stb, _ := Encode(s)
	if code, _ := post(t, srv.URL+"/v1/almanac/agents/"+bob.Address()+"/status", stb); code != 400 {
		t.Fatalf("status with mismatched path: %d", code)
	}
	if code, _ := post(t, srv.URL+"/v1/almanac/agents/"+id.Address()+"/status", stb); code != 200 {
		t.Fatalf("status: %d", code)
	}
	if rec, _ := reg.Lookup(id.Address()); rec.Active {
		t.Fatal("status not applied")
	}

	// Manifests: the chat manifest is accepted; one whose digest lies is refused.
	if code, _ := post(t, srv.URL+"/v1/almanac/manifests", chatproto.Manifest()); code != 200 {
		t.Fatalf("manifest: %d", code)
	}
	if _, ok := reg.Manifest(chatproto.ProtocolDigest); !ok {
		t.Fatal("manifest not stored")
	}
	lying := strings.Replace(string(chatproto.Manifest()), chatproto.ProtocolDigest, "proto:"+strings.Repeat("0", 64), 1)
	if code, _ := post(t, srv.URL+"/v1/almanac/manifests", []byte(lying)); code != 400 {
		t.Fatalf("lying manifest: %d", code)
	}

	// Expiry makes the record unresolvable.
	now = now.Add(49 * time.Hour)
	if _, err := reg.Resolve(context.Background(), id.Address()); !errors.Is(err, ErrUnresolved) {
		t.Fatalf("expired record resolved: %v", err)
	}
	if got := reg.Requests(); len(got) == 0 || got[0] != "GET /v1/almanac/agents/"+id.Address() {
		t.Fatalf("request log: %v", got)
	}
}

func TestWeightedOrderCoversAll(t *testing.T) {
	eps := []Endpoint{{URL: "a", Weight: 1}, {URL: "b", Weight: 100}, {URL: "c", Weight: 0}}
	firstB := 0
	for range 200 {
		out := weightedOrder(eps)
		if len(out) != 3 {
			t.Fatalf("lost endpoints: %v", out)
		}
		if out[0] == "b" {
			firstB++
		}
	}
	if firstB < 150 {
		t.Fatalf("heavy endpoint first only %d/200 times", firstB)
	}
}

// A registry with a File still resolves, after a restart, the peers registered before it.
func TestRegistryFileSurvivesRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "almanac.json")
	id, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	att, err := NewAttestation(id, identity.MainnetPrefix, []string{"http://127.0.0.1:9/submit"}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Registry{File: file}).Register(att); err != nil {
		t.Fatal(err)
	}
	got, err := (&Registry{File: file}).Resolve(context.Background(), id.Address())
	if err != nil || len(got) != 1 || got[0] != "http://127.0.0.1:9/submit" {
		t.Fatalf("after restart: %v %v", got, err)
	}
	if _, err := (&Registry{File: file, Now: func() time.Time { return time.Now().Add(49 * time.Hour) }}).Resolve(context.Background(), id.Address()); err == nil {
		t.Fatal("an expired registration was loaded")
	}
}
