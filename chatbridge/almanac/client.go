package almanac

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/signoff/signoff/chatbridge/identity"
)

// Client calls the unauthenticated, signature-protected Almanac API routes the reference uses:
// POST /agents (AlmanacApiRegistrationPolicy), POST /agents/{address}/status
// (update_agent_status) and POST /manifests (Agent.publish_manifest).
type Client struct {
	// BaseURL is the Almanac API root, e.g. DefaultAPI or a local Registry's .../v1/almanac.
	BaseURL string
	// HTTP defaults to a client with a 10 s timeout.
	HTTP *http.Client
}

// NewAttestation builds and signs a registration for id at the given endpoint URLs (weight 1).
// prefix is "agent" (mainnet) or "test-agent".
func NewAttestation(id *identity.Identity, prefix string, endpoints, protocols []string, now time.Time) (*Attestation, error) {
	a := &Attestation{AgentIdentifier: id.Identifier(prefix), Protocols: append([]string{}, protocols...)}
	for _, u := range endpoints {
		a.Endpoints = append(a.Endpoints, Endpoint{URL: u, Weight: 1})
	}
	if a.Endpoints == nil {
		a.Endpoints = []Endpoint{}
	}
	if err := a.Sign(id, now); err != nil {
		return nil, err
	}
	return a, nil
}

// Register posts a signed attestation.
func (c *Client) Register(ctx context.Context, a *Attestation) error {
	body, err := Encode(a)
	if err != nil {
		return err
	}
	return c.post(ctx, "/agents", body)
}

// UpdateStatus posts a signed status update for the agent.
func (c *Client) UpdateStatus(ctx context.Context, s *StatusUpdate) error {
	body, err := Encode(s)
	if err != nil {
		return err
	}
	return c.post(ctx, "/agents/"+s.Address()+"/status", body)
}

// PublishManifest posts a protocol manifest (e.g. chatproto.Manifest()).
func (c *Client) PublishManifest(ctx context.Context, manifest []byte) error {
	return c.post(ctx, "/manifests", manifest)
}

func (c *Client) post(ctx context.Context, path string, body []byte) error {
	base := c.BaseURL
	if base == "" {
		base = DefaultAPI
	}
	u := strings.TrimRight(base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("almanac: POST %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("almanac: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return fmt.Errorf("almanac: POST %s: HTTP %d %s", path, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}
