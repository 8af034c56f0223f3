package almanac

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultAPI is the public Almanac API base (uagents_core/config.py).
const DefaultAPI = "https://agentverse.ai/v1/almanac"

// APIResolver resolves addresses through an Almanac API (AlmanacApiResolver without the
// on-chain fallback): GET {BaseURL}/agents/{address}[?prefix=...].
type APIResolver struct {
	// BaseURL is the Almanac API root, e.g. DefaultAPI or http://127.0.0.1:port/v1/almanac.
	BaseURL string
	// Prefix, when set ("agent" or "test-agent"), is sent as ?prefix=.
	Prefix string
	// Client defaults to one with a 10 s timeout (DEFAULT_REQUEST_TIMEOUT).
	Client *http.Client
}

// Resolve returns endpoint URLs in weighted random order, or an error wrapping ErrUnresolved
// when the agent is unknown, expired or has no endpoints.
func (r *APIResolver) Resolve(ctx context.Context, address string) ([]string, error) {
	base := r.BaseURL
	if base == "" {
		base = DefaultAPI
	}
	u := strings.TrimRight(base, "/") + "/agents/" + url.PathEscape(address)
	if r.Prefix != "" {
		u += "?prefix=" + url.QueryEscape(r.Prefix)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("almanac: resolve %s: %w", address, err)
	}
	client := r.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("almanac: resolve %s: %w", address, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s (HTTP %d)", ErrUnresolved, address, resp.StatusCode)
	}
	var body struct {
		Endpoints []Endpoint `json:"endpoints"`
		Expiry    any        `json:"expiry"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&body); err != nil {
		return nil, fmt.Errorf("almanac: resolve %s: %w", address, err)
	}
	if body.Expiry == nil || len(body.Endpoints) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnresolved, address)
	}
	return weightedOrder(body.Endpoints), nil
}

// weightedOrder samples all endpoints without replacement, heavier ones tending first
// (helpers.weighted_random_sample); non-positive weights count as 1.
func weightedOrder(eps []Endpoint) []string {
	rest := append([]Endpoint(nil), eps...)
	out := make([]string, 0, len(rest))
	for len(rest) > 0 {
		total := 0
		for _, e := range rest {
			total += max(e.Weight, 1)
		}
		pick := rand.IntN(total)
		for i, e := range rest {
			pick -= max(e.Weight, 1)
			if pick < 0 {
				out = append(out, e.URL)
				rest = append(rest[:i], rest[i+1:]...)
				break
			}
		}
	}
	return out
}
