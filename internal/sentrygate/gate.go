// Package sentrygate is the runtime gate beyond page errors: it asks Sentry whether the
// preview reported error or fatal events while the verifier drove it. Each preview runs with
// the release signoff-<contract>-<attempt> and the environment preview-<contract>, so the
// query sees that attempt's events only. Events reach Sentry's query API some time after they
// happen; the gate keeps asking, within a bound, until that lag has passed.
package sentrygate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

// Source names the gate in a GateResult.
const Source = "sentry"

// Defaults for a Config that leaves them unset.
const (
	DefaultBaseURL  = "https://sentry.io/"
	DefaultGrace    = 60 * time.Second
	DefaultInterval = 10 * time.Second
	DefaultMaxPolls = 12
	// MaxReported bounds the errors copied into a GateResult (and so into history).
	MaxReported = 20
)

// Config configures the gate. Environment names the workers read are given in brackets.
type Config struct {
	// Token is a read-only auth token [SENTRY_AUTH_TOKEN] (scope event:read / org:read).
	Token string
	// Org is the organization slug [SENTRY_ORG].
	Org string
	// Project is the project slug or numeric id [SENTRY_PROJECT].
	Project string
	// BaseURL is Sentry's address [SENTRY_URL], default https://sentry.io/ (use the region
	// host, e.g. https://de.sentry.io/, where required).
	BaseURL string
	// Grace is how long after the verification window the gate keeps looking, for
	// ingestion lag.
	Grace time.Duration
	// Interval is the pause between queries.
	Interval time.Duration
	// MaxPolls bounds the queries of one check, whatever the clock says.
	MaxPolls int
	// HTTPClient carries the queries; nil uses one with a 20 s timeout.
	HTTPClient *http.Client
	// Now and Sleep are the clock (tests replace them).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Gate queries Sentry's events API. It implements capability.Gate.
type Gate struct {
	cfg  Config
	base *url.URL
}

var (
	slug      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	numericID = regexp.MustCompile(`^[0-9]{1,20}$`)
)

// New checks the configuration and fills in defaults.
func New(cfg Config) (*Gate, error) {
	if cfg.Token == "" || cfg.Org == "" || cfg.Project == "" {
		return nil, errors.New("sentry gate: token, organization and project are all required")
	}
	if !slug.MatchString(cfg.Org) || !slug.MatchString(cfg.Project) {
		return nil, fmt.Errorf("sentry gate: organization %q or project %q is not a slug", cfg.Org, cfg.Project)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("sentry gate: base URL: %w", err)
	}
	host := base.Hostname()
	if base.Scheme != "https" && !(base.Scheme == "http" && (host == "127.0.0.1" || host == "::1" || host == "localhost")) {
		return nil, fmt.Errorf("sentry gate: %s: the token travels only over https (or http to loopback)", cfg.BaseURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxPolls <= 0 {
		cfg.MaxPolls = DefaultMaxPolls
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	return &Gate{cfg: cfg, base: base}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Release is the Sentry release a preview of an attempt reports under.
func Release(contractID string, attempt int) string {
	return fmt.Sprintf("signoff-%s-%d", contractID, attempt)
}

// Environment is the Sentry environment of a contract's previews.
func Environment(contractID string) string { return "preview-" + contractID }

// ErrInconclusive is returned when the poll bound ran out before the ingestion grace had
// passed: no error seen is not the same as none sent, so it is not a pass.
var ErrInconclusive = errors.New("sentry gate: inconclusive")

// Check asks for error and fatal events of the attempt's release and environment in
// [From, To]. Errors found end the check at once; a clean answer needs a query made after
// To + Grace. At most MaxPolls queries are made.
func (g *Gate) Check(ctx context.Context, req capability.GateRequest) (contracts.GateResult, error) {
	if !contracts.ValidContractID(req.ContractID) || req.Attempt < 1 {
		return contracts.GateResult{}, capability.Refused(fmt.Errorf("sentry gate: contract %q attempt %d", req.ContractID, req.Attempt))
	}
	from, err := time.Parse(time.RFC3339Nano, req.From)
	if err != nil {
		return contracts.GateResult{}, capability.Refused(fmt.Errorf("sentry gate: window start %q: %w", req.From, err))
	}
	to, err := time.Parse(time.RFC3339Nano, req.To)
	if err != nil {
		return contracts.GateResult{}, capability.Refused(fmt.Errorf("sentry gate: window end %q: %w", req.To, err))
	}
	if to.Before(from) {
		return contracts.GateResult{}, capability.Refused(fmt.Errorf("sentry gate: window ends (%s) before it starts (%s)", req.To, req.From))
	}
	settled := to.Add(g.cfg.Grace)
	for poll := 1; ; poll++ {
		final := !g.cfg.Now().Before(settled)
		found, err := g.query(ctx, req, from, to)
		if err != nil {
			return contracts.GateResult{}, err
		}
		if len(found) > 0 {
			return contracts.GateResult{Source: Source, Errors: found}, nil
		}
		if final {
			return contracts.GateResult{Source: Source, Errors: []string{}}, nil
		}
		if poll >= g.cfg.MaxPolls {
			return contracts.GateResult{}, fmt.Errorf("%w: %d queries made, none after the ingestion grace ended at %s", ErrInconclusive, poll, settled.UTC().Format(time.RFC3339))
		}
		wait := g.cfg.Interval
		if left := settled.Sub(g.cfg.Now()); left > 0 && left < wait {
			wait = left
		}
		if err := g.cfg.Sleep(ctx, wait); err != nil {
			return contracts.GateResult{}, fmt.Errorf("sentry gate: %w", err)
		}
	}
}

// eventsResponse is the documented shape of the events table: rows keyed by the requested
// fields, and their types in meta.
type eventsResponse struct {
	Data []map[string]any `json:"data"`
	Meta struct {
		Fields map[string]string `json:"fields"`
	} `json:"meta"`
}

// Fields the gate asks for.
var fields = []string{"id", "title", "level", "timestamp", "release", "environment"}

func (g *Gate) query(ctx context.Context, req capability.GateRequest, from, to time.Time) ([]string, error) {
	q := url.Values{}
	for _, f := range fields {
		q.Add("field", f)
	}
	search := fmt.Sprintf("release:%s level:[error,fatal] !event.type:transaction", Release(req.ContractID, req.Attempt))
	if numericID.MatchString(g.cfg.Project) {
		q.Set("project", g.cfg.Project)
	} else {
		search = "project:" + g.cfg.Project + " " + search
	}
	q.Set("query", search)
	q.Set("environment", Environment(req.ContractID))
	q.Set("start", from.UTC().Format(time.RFC3339))
	// Sentry's window has second precision; round the end up so the last second counts.
	q.Set("end", to.UTC().Add(time.Second-1).Truncate(time.Second).Format(time.RFC3339))
	q.Set("sort", "-timestamp")
	q.Set("per_page", "100")
	u := g.base.JoinPath("api", "0", "organizations", g.cfg.Org, "events") // JoinPath drops the trailing slash
	u.Path += "/"
	u.RawQuery = q.Encode()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Authorization", "Bearer "+g.cfg.Token)
	hreq.Header.Set("Accept", "application/json")
	resp, err := g.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("sentry gate: query events: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("sentry gate: read events: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		detail := strings.TrimSpace(string(body))
		if len(detail) > 300 {
			detail = detail[:300]
		}
		return nil, fmt.Errorf("sentry gate: events query answered %s: %s", resp.Status, detail)
	}
	var out eventsResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("sentry gate: events answer is not the documented table: %w", err)
	}
	if out.Data == nil {
		return nil, errors.New("sentry gate: events answer has no data array")
	}
	found := []string{}
	for i, row := range out.Data {
		if i == MaxReported {
			found = append(found, fmt.Sprintf("sentry: and %d more error event(s)", len(out.Data)-MaxReported))
			break
		}
		found = append(found, fmt.Sprintf("sentry %s: %s (event %s at %s)", str(row["level"]), str(row["title"]), str(row["id"]), str(row["timestamp"])))
	}
	return found, nil
}

func str(v any) string {
	switch s := v.(type) {
	case nil:
		return "?"
	case string:
		return s
	default:
		return fmt.Sprint(s)
	}
}

// Compile-time check: Gate is an capability.Gate.
var _ capability.Gate = (*Gate)(nil)
