// Package agentverse registers Signoff on Agentverse so ASI:One can find and chat with it, and
// polls its Agentverse mailbox. It is only used when AGENTVERSE_API_KEY is set.
//
// Request shapes follow uagents-core 0.4.12 (uagents_core/utils/registration.py
// register_chat_agent, uagents_core/registration.py models, uagents_core/storage.py
// compute_attestation) and uagents 0.26.1 (uagents/mailbox.py), cross-checked against
// docs.agentverse.ai/api-reference (agents/register-agent, agents/list-agent-mailbox-messages,
// agents/delete-agent-mailbox-message).
package agentverse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/signoff/signoff/chatbridge/almanac"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/identity"
)

// Agentverse API locations (uagents_core/config.py).
const (
	DefaultBaseURL = "https://agentverse.ai"
	AgentsPath     = "/v2/agents"
	IdentityPath   = "/v2/identity"
	AlmanacPath    = "/v1/almanac"
	MailboxSubmit  = "/v2/agents/mailbox/submit"
	ProxySubmit    = "/v2/agents/proxy/submit"
)

// Client talks to Agentverse for one agent identity.
type Client struct {
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// APIKey is the user's Agentverse API key (Bearer). Never logged or included in errors.
	APIKey string
	// Team, when set, is sent as x-team.
	Team     string
	Identity *identity.Identity
	// HTTP defaults to a client with a 10 s timeout (DEFAULT_REQUEST_TIMEOUT).
	HTTP *http.Client
	// Now is the clock (signatures carry timestamps); defaults to time.Now.
	Now func() time.Time
}

// APIError is a non-2xx answer from Agentverse; Detail is its "detail" field when present.
type APIError struct {
	Method, Path string
	Status       int
	Detail       string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("agentverse: %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Detail)
}

// Profile is AgentProfile: what the Agentverse listing shows.
type Profile struct {
	Description    string   `json:"description"`     // <= 300 chars
	Readme         string   `json:"readme"`          // markdown, <= 80000 chars
	AvatarURL      string   `json:"avatar_url"`      // <= 4000 chars
	BannerURL      string   `json:"banner_url"`      // <= 4000 chars
	StarterPrompts []string `json:"starter_prompts"` // example chat prompts
}

// Registration is the v2 RegistrationRequest body of POST /v2/agents, in the model's order.
type Registration struct {
	Address   string             `json:"address"`
	Name      string             `json:"name"`   // 1..32 chars
	Handle    *string            `json:"handle"` // <= 40 chars
	URL       *string            `json:"url"`    // where Agentverse's proxy forwards envelopes
	AgentType string             `json:"agent_type"`
	Profile   Profile            `json:"profile"`
	Endpoints []almanac.Endpoint `json:"endpoints"`
	Protocols []string           `json:"protocols"`
	Metadata  map[string]any     `json:"metadata"`
}

// ChatAgent describes Signoff's listing for RegisterChatAgent.
type ChatAgent struct {
	Name   string
	Handle string
	// Endpoint is the public URL of the bridge's /submit. Required unless Mailbox.
	Endpoint string
	// Mailbox registers Agentverse's mailbox as the endpoint (for agents behind NAT); the
	// bridge then receives envelopes through Mailbox polling.
	Mailbox bool
	// DirectEndpoint lists Endpoint itself instead of Agentverse's proxy. The reference's
	// default (track_interactions=True) is the proxy, so Agentverse counts interactions.
	DirectEndpoint bool
	Profile        Profile
	Metadata       map[string]any
	// Inactive skips the status update that marks the agent active.
	Inactive bool
	// SkipManifest skips publishing the chat protocol manifest.
	SkipManifest bool
}

func (c *Client) base() string {
	if c.BaseURL == "" {
		return DefaultBaseURL
	}
	return strings.TrimRight(c.BaseURL, "/")
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// RegisterChatAgent is register_chat_agent: prove ownership of the address if Agentverse does
// not know it, register the listing with the chat protocol digest, mark it active, and publish
// the protocol manifest.
func (c *Client) RegisterChatAgent(ctx context.Context, a ChatAgent) error {
	if c.Identity == nil || c.APIKey == "" {
		return errors.New("agentverse: Identity and APIKey are required")
	}
	if n := len(a.Name); n < 1 || n > 32 {
		return fmt.Errorf("agentverse: name must be 1..32 characters, got %d", n)
	}
	if len(a.Handle) > 40 || len(a.Profile.Description) > 300 || len(a.Profile.Readme) > 80000 {
		return errors.New("agentverse: handle (40), description (300) or readme (80000) too long")
	}
	reg := Registration{
		Address: c.Identity.Address(), Name: a.Name, AgentType: "uagent",
		Profile: a.Profile, Protocols: []string{chatproto.ProtocolDigest}, Metadata: a.Metadata,
	}
	if reg.Profile.StarterPrompts == nil {
		reg.Profile.StarterPrompts = []string{}
	}
	if a.Handle != "" {
		reg.Handle = &a.Handle
	}
	switch {
	case a.Mailbox:
		reg.Endpoints = []almanac.Endpoint{{URL: c.base() + MailboxSubmit, Weight: 1}}
		if a.Endpoint != "" {
			reg.URL = &a.Endpoint
		}
	case a.Endpoint == "":
		return errors.New("agentverse: Endpoint is required unless Mailbox is set")
	case a.DirectEndpoint:
		reg.URL = &a.Endpoint
		reg.Endpoints = []almanac.Endpoint{{URL: a.Endpoint, Weight: 1}}
	default:
		reg.URL = &a.Endpoint
		reg.Endpoints = []almanac.Endpoint{{URL: c.base() + ProxySubmit, Weight: 1}}
	}
	if err := c.EnsureIdentity(ctx); err != nil {
		return err
	}
	if err := c.Register(ctx, reg); err != nil {
		return err
	}
	if !a.Inactive {
		if err := c.SetActive(ctx, true); err != nil {
			return err
		}
	}
	if !a.SkipManifest {
		if err := c.PublishManifest(ctx, chatproto.Manifest()); err != nil {
			return err
		}
	}
	return nil
}

// EnsureIdentity proves ownership of the agent address when Agentverse does not know it yet:
// GET /v2/agents/{address}; on 404, GET /v2/identity/{address}/challenge and POST
// /v2/identity {address, challenge, challenge_response = Identity.sign(challenge)}.
func (c *Client) EnsureIdentity(ctx context.Context) error {
	addr := c.Identity.Address()
	status, _, err := c.do(ctx, http.MethodGet, AgentsPath+"/"+addr, nil, c.userHeaders(true), false)
	if err != nil {
		return err
	}
	switch {
	case status == http.StatusNotFound:
	case status/100 == 2:
		return nil
	default:
		return &APIError{Method: "GET", Path: AgentsPath + "/" + addr, Status: status, Detail: "unexpected status checking the agent"}
	}
	// The reference sends only the authorization header on the challenge request.
	_, body, err := c.do(ctx, http.MethodGet, IdentityPath+"/"+addr+"/challenge", nil, map[string]string{
		"Content-Type": "application/json", "Authorization": "Bearer " + c.APIKey,
	}, true)
	if err != nil {
		return fmt.Errorf("agentverse: failed to request proof-of-ownership challenge: %w", err)
	}
	var ch struct {
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &ch); err != nil || ch.Challenge == "" {
		return errors.New("agentverse: challenge response has no challenge")
	}
	sig, err := c.Identity.Sign([]byte(ch.Challenge))
	if err != nil {
		return err
	}
	proof, _ := json.Marshal(struct {
		Address           string `json:"address"`
		Challenge         string `json:"challenge"`
		ChallengeResponse string `json:"challenge_response"`
	}{addr, ch.Challenge, sig})
	_, _, err = c.do(ctx, http.MethodPost, IdentityPath, proof, c.userHeaders(true), true)
	return err
}

// Register posts the listing (POST /v2/agents, Bearer). Agentverse creates or updates it.
func (c *Client) Register(ctx context.Context, reg Registration) error {
	body, err := almanac.Encode(reg)
	if err != nil {
		return err
	}
	_, _, err = c.do(ctx, http.MethodPost, AgentsPath, body, c.userHeaders(true), true)
	return err
}

// SetActive posts a signed AgentStatusUpdate to the Almanac (no API key involved).
func (c *Client) SetActive(ctx context.Context, active bool) error {
	s := &almanac.StatusUpdate{AgentIdentifier: c.Identity.Address(), IsActive: active}
	if err := s.Sign(c.Identity, c.now()); err != nil {
		return err
	}
	return (&almanac.Client{BaseURL: c.base() + AlmanacPath, HTTP: c.httpClient()}).UpdateStatus(ctx, s)
}

// PublishManifest posts a protocol manifest to the Almanac (Agent.publish_manifest).
func (c *Client) PublishManifest(ctx context.Context, manifest []byte) error {
	return (&almanac.Client{BaseURL: c.base() + AlmanacPath, HTTP: c.httpClient()}).PublishManifest(ctx, manifest)
}

// Disconnect removes the agent from Agentverse (DELETE /v2/agents/{address}, Bearer).
func (c *Client) Disconnect(ctx context.Context) error {
	_, _, err := c.do(ctx, http.MethodDelete, AgentsPath+"/"+c.Identity.Address(), nil, c.userHeaders(true), true)
	return err
}

func (c *Client) userHeaders(withTeam bool) map[string]string {
	h := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + c.APIKey}
	if withTeam && c.Team != "" {
		h["x-team"] = c.Team
	}
	return h
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// do sends one request. With strict, a non-2xx status is returned as *APIError.
func (c *Client) do(ctx context.Context, method, path string, body []byte, headers map[string]string, strict bool) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base()+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("agentverse: %s %s: %w", method, path, err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("agentverse: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if strict && resp.StatusCode/100 != 2 {
		return resp.StatusCode, data, &APIError{Method: method, Path: path, Status: resp.StatusCode, Detail: detail(data)}
	}
	return resp.StatusCode, data, nil
}

func detail(body []byte) string {
	var d struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &d) == nil && len(d.Detail) > 0 {
		var s string
		if json.Unmarshal(d.Detail, &s) == nil {
			return s
		}
		return string(d.Detail)
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
