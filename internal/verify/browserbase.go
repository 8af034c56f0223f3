package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// DefaultBrowserbaseURL is Browserbase's public API.
const DefaultBrowserbaseURL = "https://api.browserbase.com"

// browserbaseRecordingBase is where Browserbase keeps a finished session's recording
// (docs.browserbase.com/platform/browser/observability: "the recording is available at
// https://browserbase.com/sessions/{session.id}").
const browserbaseRecordingBase = "https://browserbase.com/sessions/"

// Browserbase is a hosted Chromium: each run creates a session over the REST API, connects to
// its connectUrl over CDP, and asks for the session's release when done. The session replay
// URL goes into evidence.
//
// API shape (docs.browserbase.com/reference/api/create-a-session and .../update-a-session):
//
//	POST /v1/sessions        X-BB-API-Key: <key>  {"projectId": "..."}  -> {"id", "connectUrl", "status", ...}
//	POST /v1/sessions/{id}   X-BB-API-Key: <key>  {"projectId": "...", "status": "REQUEST_RELEASE"}
type Browserbase struct {
	APIKey    string
	ProjectID string
	BaseURL   string       // default DefaultBrowserbaseURL
	Client    *http.Client // default: 30 s timeout
	// TimeoutSeconds ends the hosted session after this long even if the release is lost
	// (Browserbase accepts 60..21600); 0 keeps the project's default.
	TimeoutSeconds int
}

// BrowserbaseSession is the part of Browserbase's session object the verifier uses.
type BrowserbaseSession struct {
	ID         string `json:"id"`
	ConnectURL string `json:"connectUrl"`
	Status     string `json:"status"`
}

// RecordingURL is the session's recording in the Browserbase dashboard.
func (s BrowserbaseSession) RecordingURL() string {
	return browserbaseRecordingBase + url.PathEscape(s.ID)
}

// CreateSession starts a hosted browser session.
func (b *Browserbase) CreateSession(ctx context.Context) (*BrowserbaseSession, error) {
	if b.APIKey == "" || b.ProjectID == "" {
		return nil, errors.New("browserbase: API key and project id are required")
	}
	body := map[string]any{"projectId": b.ProjectID}
	if b.TimeoutSeconds > 0 {
		body["timeout"] = b.TimeoutSeconds
	}
	var s BrowserbaseSession
	if err := b.post(ctx, "/v1/sessions", body, &s); err != nil {
		return nil, fmt.Errorf("browserbase: create session: %w", err)
	}
	if s.ID == "" {
		return nil, errors.New("browserbase: create session: the response has no session id")
	}
	u, err := url.Parse(s.ConnectURL)
	if err != nil || (u.Scheme != "wss" && u.Scheme != "ws") || u.Host == "" {
		return nil, fmt.Errorf("browserbase: session %s: the response has no usable connectUrl", s.ID)
	}
	return &s, nil
}

// ReleaseSession ends a session before its timeout, so it stops costing.
func (b *Browserbase) ReleaseSession(ctx context.Context, id string) error {
	body := map[string]any{"projectId": b.ProjectID, "status": "REQUEST_RELEASE"}
	if err := b.post(ctx, "/v1/sessions/"+url.PathEscape(id), body, nil); err != nil {
		return fmt.Errorf("browserbase: release session %s: %w", id, err)
	}
	return nil
}

// Open creates a session and connects to it over CDP.
func (b *Browserbase) Open(ctx context.Context, pw *playwright.Playwright) (*BrowserSession, error) {
	s, err := b.CreateSession(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := CDP{Endpoint: s.ConnectURL, RecordingURL: s.RecordingURL()}.Open(ctx, pw)
	if err != nil {
		b.releaseQuietly(s.ID)
		return nil, fmt.Errorf("browserbase session %s: %w", s.ID, err)
	}
	disconnect := sess.release
	sess.release = func() error {
		err := disconnect()
		rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		return errors.Join(err, b.ReleaseSession(rctx, s.ID))
	}
	return sess, nil
}

func (b *Browserbase) releaseQuietly(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = b.ReleaseSession(ctx, id)
}

func (b *Browserbase) post(ctx context.Context, path string, body any, out any) error {
	base := b.BaseURL
	if base == "" {
		base = DefaultBrowserbaseURL
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("X-BB-API-Key", b.APIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	client := b.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
