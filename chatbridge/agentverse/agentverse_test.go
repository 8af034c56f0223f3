package agentverse

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
)

const testKey = "av-test-key-not-a-secret"

type call struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// fakeAgentverse records every request and answers from a route table.
type fakeAgentverse struct {
	mu     sync.Mutex
	calls  []call
	routes map[string]func(w http.ResponseWriter, c call)
}

func (f *fakeAgentverse) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c := call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	h := f.routes[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"detail": "Not Found"}`)
		return
	}
	h(w, c)
}

func (f *fakeAgentverse) recorded() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func alice(t *testing.T) *identity.Identity {
	t.Helper()
	id, err := identity.FromSeed("alice recovery password", 0)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func jsonEq(t *testing.T, got []byte, want string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("body is not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func ok(body string) func(http.ResponseWriter, call) {
	return func(w http.ResponseWriter, _ call) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// The flow of uagents_core/utils/registration.py register_chat_agent for a new agent.
func TestRegisterChatAgentNewAgent(t *testing.T) {
	id := alice(t)
	addr := id.Address()
	const challenge = "example-challenge-0123456789" // signatures.json hash_then_sign_vector
	fake := &fakeAgentverse{routes: map[string]func(http.ResponseWriter, call){
		"GET /v2/identity/" + addr + "/challenge":     ok(`{"challenge": "` + challenge + `"}`),
		"POST /v2/identity":                           ok(`{"address": "` + addr + `"}`),
		"POST /v2/agents":                             ok(`{"success": true}`),
		"POST /v1/almanac/agents/" + addr + "/status": ok(`{}`),
		"POST /v1/almanac/manifests":                  ok(`{}`),
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	now := time.Unix(1735787045, 0)
	c := &Client{BaseURL: srv.URL, APIKey: testKey, Team: "signoff-team", Identity: id, Now: func() time.Time { return now }}
	err := c.RegisterChatAgent(context.Background(), ChatAgent{
		Name: "Signoff", Handle: "signoff", Endpoint: "https://signoff.example/submit",
		Profile:  Profile{Description: "Refuses to call a task done until a browser proves it.", Readme: "# Signoff", StarterPrompts: []string{"Make /watchlist mobile friendly"}},
		Metadata: map[string]any{"categories": []any{"developer-tools"}, "is_public": "True"},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := fake.recorded()
	want := []string{
		"GET /v2/agents/" + addr,
		"GET /v2/identity/" + addr + "/challenge",
		"POST /v2/identity",
		"POST /v2/agents",
		"POST /v1/almanac/agents/" + addr + "/status",
		"POST /v1/almanac/manifests",
	}
	if len(calls) != len(want) {
		t.Fatalf("calls = %v", calls)
	}
	for i, c := range calls {
		if c.Method+" "+c.Path != want[i] {
			t.Fatalf("call %d = %s %s, want %s", i, c.Method, c.Path, want[i])
		}
	}
	bearer := "Bearer " + testKey
	// 1. Existence check: Bearer, content-type, x-team (registration.py _register_in_agentverse).
	if calls[0].Header.Get("Authorization") != bearer || calls[0].Header.Get("x-team") != "signoff-team" {
		t.Fatalf("agent check headers: %v", calls[0].Header)
	}
	// 2. Challenge: only the authorization header (no x-team) in the reference.
	if calls[1].Header.Get("Authorization") != bearer || calls[1].Header.Get("x-team") != "" {
		t.Fatalf("challenge headers: %v", calls[1].Header)
	}
	// 3. IdentityProof {address, challenge, challenge_response = Identity.sign(challenge)}:
	// RFC6979 makes it the vector's exact signature.
	jsonEq(t, calls[2].Body, `{"address": "`+addr+`", "challenge": "`+challenge+`", "challenge_response": "sig1zvwqnkq2afnegndcjjaq2wdxh88ydgx8vfj55y378mpdd0ng3mfkcqkq486j9d8cgkjl377qarauuhj9jmhns428um62yh07lh0sfqqxrrg47"}`)
	if calls[2].Header.Get("Content-Type") != "application/json" || calls[2].Header.Get("Authorization") != bearer {
		t.Fatalf("proof headers: %v", calls[2].Header)
	}
	// 4. RegistrationRequest (uagents_core/registration.py; docs: api-reference/agents/register-agent),
	// endpoints = the proxy as with track_interactions=True, url = our endpoint.
	jsonEq(t, calls[3].Body, `{"address": "`+addr+`", "name": "Signoff", "handle": "signoff", "url": "https://signoff.example/submit",
		"agent_type": "uagent",
		"profile": {"description": "Refuses to call a task done until a browser proves it.", "readme": "# Signoff", "avatar_url": "", "banner_url": "", "starter_prompts": ["Make /watchlist mobile friendly"]},
		"endpoints": [{"url": "`+srv.URL+`/v2/agents/proxy/submit", "weight": 1}],
		"protocols": ["`+chatproto.ProtocolDigest+`"],
		"metadata": {"categories": ["developer-tools"], "is_public": "True"}}`)
	if !strings.HasPrefix(string(calls[3].Body), `{"address":`) {
		t.Fatalf("registration field order: %s", calls[3].Body)
	}
	// 5. AgentStatusUpdate: signed, no API key (registration.json status_update vector body).
	if calls[4].Header.Get("Authorization") != "" {
		t.Fatal("status update must not carry the API key")
	}
	if string(calls[4].Body) != `{"agent_identifier":"agent1qf5gfqm48k9acegez3sg82ney2aa6l5fvpwh3n3z0ajh0nam3ssgwnn5me7","signature":"sig1x8uym59djee8gw5z5ty4xks7a4qmedhxc6fdepxesrf23p0r6s0xzf2n54ffwxg3nfdytdy8jt8jgqmz89t55rgy99e28d87pnk3ahsmz5z79","timestamp":1735787045,"is_active":true}` {
		t.Fatalf("status body: %s", calls[4].Body)
	}
	// 6. Manifest (Agent.publish_manifest), unauthenticated.
	if string(calls[5].Body) != string(chatproto.Manifest()) || calls[5].Header.Get("Authorization") != "" {
		t.Fatal("manifest body or headers wrong")
	}
	for _, c := range calls {
		if strings.Contains(string(c.Body), testKey) {
			t.Fatalf("API key leaked into a body: %s %s", c.Method, c.Path)
		}
	}
}

func TestRegisterExistingAgentAndMailboxMode(t *testing.T) {
	id := alice(t)
	addr := id.Address()
	fake := &fakeAgentverse{routes: map[string]func(http.ResponseWriter, call){
		"GET /v2/agents/" + addr:                      ok(`{"address": "` + addr + `"}`),
		"POST /v2/agents":                             ok(`{"success": true}`),
		"POST /v1/almanac/agents/" + addr + "/status": ok(`{}`),
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, APIKey: testKey, Identity: id}
	if err := c.RegisterChatAgent(context.Background(), ChatAgent{Name: "Signoff", Mailbox: true, SkipManifest: true}); err != nil {
		t.Fatal(err)
	}
	calls := fake.recorded()
	if len(calls) != 3 || calls[1].Path != "/v2/agents" {
		t.Fatalf("an existing agent needs no proof: %v", calls)
	}
	var reg map[string]any
	_ = json.Unmarshal(calls[1].Body, &reg)
	eps := reg["endpoints"].([]any)
	if eps[0].(map[string]any)["url"] != srv.URL+"/v2/agents/mailbox/submit" || reg["url"] != nil || reg["handle"] != nil || reg["metadata"] != nil {
		t.Fatalf("mailbox registration: %s", calls[1].Body)
	}
}

func TestAgentverseErrorsAreTyped(t *testing.T) {
	id := alice(t)
	fake := &fakeAgentverse{routes: map[string]func(http.ResponseWriter, call){
		"GET /v2/agents/" + id.Address(): func(w http.ResponseWriter, _ call) { w.WriteHeader(404) },
		"GET /v2/identity/" + id.Address() + "/challenge": func(w http.ResponseWriter, _ call) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"detail": "Invalid or expired API key"}`)
		},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, APIKey: testKey, Identity: id}
	err := c.RegisterChatAgent(context.Background(), ChatAgent{Name: "Signoff", Endpoint: "https://x/submit"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Detail != "Invalid or expired API key" || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err = %v", err)
	}
	if err := c.RegisterChatAgent(context.Background(), ChatAgent{Name: strings.Repeat("x", 33), Endpoint: "https://x"}); err == nil {
		t.Fatal("over-long name accepted")
	}
	if err := c.RegisterChatAgent(context.Background(), ChatAgent{Name: "Signoff"}); err == nil {
		t.Fatal("missing endpoint accepted")
	}
}

func TestAttestationTokenVector(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "registration.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Token struct {
			ValidFrom     int64  `json:"valid_from"`
			ValidTo       int64  `json:"valid_to"`
			NonceHex      string `json:"nonce_hex"`
			PayloadHex    string `json:"payload_hex"`
			PayloadSHAHex string `json:"payload_sha256_hex"`
			Token         string `json:"token"`
		} `json:"agent_attestation_token"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	nonce, _ := hex.DecodeString(f.Token.NonceHex)
	tok, err := AttestationToken(alice(t), time.Unix(f.Token.ValidFrom, 0), time.Duration(f.Token.ValidTo-f.Token.ValidFrom)*time.Second, nonce)
	if err != nil || tok != f.Token.Token {
		t.Fatalf("token\n got %s\nwant %s", tok, f.Token.Token)
	}
	parts := strings.Split(tok, ":")
	payload, _ := base64.StdEncoding.DecodeString(parts[1])
	sum := sha256.Sum256(payload)
	if hex.EncodeToString(payload) != f.Token.PayloadHex || hex.EncodeToString(sum[:]) != f.Token.PayloadSHAHex {
		t.Fatal("payload mismatch")
	}
	if err := identity.VerifyDigest(alice(t).Address(), sum[:], parts[2]); err != nil {
		t.Fatalf("token signature: %v", err)
	}
}

func TestMailboxPollDeliversAndDeletes(t *testing.T) {
	agent := alice(t)
	peer, _ := identity.FromSeed("bob recovery password", 0)
	seal := func(signer *identity.Identity, text string) json.RawMessage {
		s := &transport.Sender{Identity: signer}
		env, err := s.Seal(agent.Address(), uuid4.New(), chatproto.ChatMessage{Timestamp: time.Now(), MsgID: uuid4.New(),
			Content: []chatproto.Content{chatproto.TextContent{Text: text}}}, chatproto.ProtocolDigest)
		if err != nil {
			t.Fatal(err)
		}
		if signer != peer { // claims to be bob, signed by someone else
			env.Sender = peer.Address()
		}
		b, _ := env.Encode()
		return b
	}
	stranger, _ := identity.Generate()
	items := []StoredEnvelope{
		{UUID: "11111111-1111-4111-8111-111111111111", Envelope: seal(peer, "hello via mailbox"), ReceivedAt: "2025-01-02T03:04:05Z", ExpiresAt: "2025-01-03T03:04:05Z"},
		{UUID: "22222222-2222-4222-8222-222222222222", Envelope: seal(stranger, "forged"), ReceivedAt: "2025-01-02T03:04:05Z", ExpiresAt: "2025-01-03T03:04:05Z"},
		{UUID: "33333333-3333-4333-8333-333333333333", Envelope: seal(peer, "busy"), ReceivedAt: "2025-01-02T03:04:05Z", ExpiresAt: "2025-01-03T03:04:05Z"},
	}
	listing, _ := json.Marshal(items)
	mailboxPath := "/v2/agents/" + agent.Address() + "/mailbox"
	routes := map[string]func(http.ResponseWriter, call){"GET " + mailboxPath: ok(string(listing))}
	for _, it := range items {
		routes["DELETE "+mailboxPath+"/"+it.UUID] = ok(`{}`)
	}
	fake := &fakeAgentverse{routes: routes}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	var got []string
	deliver := func(_ context.Context, env *envelope.Envelope) error {
		if err := env.Verify(); err != nil {
			return fmt.Errorf("rejected: %w", err)
		}
		p, _ := env.DecodePayload()
		m, _ := chatproto.DecodeChatMessage(p)
		if m.Text() == "busy" {
			return fmt.Errorf("queue full: %w", transport.ErrRetryLater)
		}
		got = append(got, m.Text())
		return nil
	}
	mb := &Mailbox{Client: &Client{BaseURL: srv.URL, Identity: agent}, Deliver: deliver}
	n, err := mb.PollOnce(context.Background())
	if err != nil || n != 1 || len(got) != 1 || got[0] != "hello via mailbox" {
		t.Fatalf("delivered %d %v (%v)", n, got, err)
	}
	calls := fake.recorded()
	if calls[0].Method != "GET" || calls[0].Query != "limit=100&offset=0" {
		t.Fatalf("poll request: %+v", calls[0])
	}
	auth := calls[0].Header.Get("Authorization")
	if !strings.HasPrefix(auth, "Agent attr:") {
		t.Fatalf("poll auth header: %q", auth)
	}
	var deleted []string
	for _, c := range calls[1:] {
		if c.Method != "DELETE" || c.Header.Get("Authorization") != auth {
			t.Fatalf("unexpected call %s %s", c.Method, c.Path)
		}
		deleted = append(deleted, strings.TrimPrefix(c.Path, mailboxPath+"/"))
	}
	// Delivered and forged items are deleted; the busy one stays for the next poll.
	if !reflect.DeepEqual(deleted, []string{items[0].UUID, items[1].UUID}) {
		t.Fatalf("deleted %v", deleted)
	}
	// The attestation is reused while valid.
	if _, err := mb.PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := fake.recorded(); c[3].Header.Get("Authorization") != auth {
		t.Fatal("attestation not reused")
	}
}

func TestRenderReadme(t *testing.T) {
	id := alice(t)
	out, err := RenderReadme(ReadmeConfig{
		Name: "Signoff", Address: id.Address(), Tagline: "Verified software delivery", Hackathon: true,
		Description: "Turns a change request into a frozen contract of browser criteria.",
		Usage:       []string{"Make /watchlist usable on a phone", "approve `abc`"},
		Resources: []ExternalResource{
			{Name: "GitHub", EnvVar: "GITHUB_TOKEN", Purpose: "branch and pull request", Required: true},
			{Name: "Stripe", EnvVar: "STRIPE_SECRET_KEY", Purpose: "manual-capture payment | refunds"},
		},
		VerifierFingerprint: "sha256:" + strings.Repeat("ab", 32), ControlFingerprint: "sha256:" + strings.Repeat("cd", 32),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Signoff\n", InnovationLabBadge, HackathonBadge, "`" + id.Address() + "`",
		"| GitHub | required | `GITHUB_TOKEN` |", "| Stripe | optional (local default) | `STRIPE_SECRET_KEY` | manual-capture payment \\| refunds |",
		"- `approve 'abc'`", chatproto.ProtocolDigest, "## Verifying its proofs",
		"verifier key `sha256:" + strings.Repeat("ab", 32) + "`", "control key `sha256:" + strings.Repeat("cd", 32) + "`",
		"--verifier-fingerprint sha256:" + strings.Repeat("ab", 32) + " --control-fingerprint sha256:" + strings.Repeat("cd", 32)} {
		if !strings.Contains(out, want) {
			t.Errorf("README lacks %q:\n%s", want, out)
		}
	}
	if _, err := RenderReadme(ReadmeConfig{Name: "x", Address: id.Address(), Description: strings.Repeat("y", MaxReadme)}); err == nil {
		t.Fatal("over-long README accepted")
	}
	// Without published keys the README says not to rely on the proofs yet.
	if out, err := RenderReadme(ReadmeConfig{Name: "x", Address: id.Address()}); err != nil || !strings.Contains(out, "signing keys are not published yet") {
		t.Errorf("README without keys: %v\n%s", err, out)
	}
	if _, err := RenderReadme(ReadmeConfig{Name: "x"}); err == nil {
		t.Fatal("README without address accepted")
	}
}
