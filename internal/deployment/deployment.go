// Package deployment says which commit a deployment serves, behind one interface: a preview
// Signoff built states it at /__verification (its own proxy answers there), and a deployment
// on a hosting platform states it through that platform's deployment metadata.
package deployment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Source states the commit a deployment at a URL serves. An error means it states none.
type Source interface {
	CommitSHA(ctx context.Context, deploymentURL string) (string, error)
}

// Vercel reads a Vercel deployment's git metadata: GET /v13/deployments/{host} with a
// read-only token; the commit is meta.githubCommitSha (or the GitLab or Bitbucket
// counterpart), and only a deployment whose readyState is READY states one.
type Vercel struct {
	Token string
	// TeamID scopes the lookup to a team (Vercel's teamId query parameter); "" is the
	// token's own account.
	TeamID string
	// BaseURL is the API's address; "" is https://api.vercel.com.
	BaseURL string
	Client  *http.Client
}

// vercelDeployment is the part of Vercel's deployment object read here.
type vercelDeployment struct {
	ReadyState string            `json:"readyState"`
	URL        string            `json:"url"`
	Meta       map[string]string `json:"meta"`
}

// CommitSHA asks Vercel which commit the deployment at deploymentURL was built from.
func (v Vercel) CommitSHA(ctx context.Context, deploymentURL string) (string, error) {
	if v.Token == "" {
		return "", errors.New("deployment: vercel: no token")
	}
	u, err := url.Parse(deploymentURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("deployment: vercel: %q is not a deployment URL", deploymentURL)
	}
	base := v.BaseURL
	if base == "" {
		base = "https://api.vercel.com"
	}
	api, err := url.Parse(strings.TrimRight(base, "/") + "/v13/deployments/" + url.PathEscape(u.Hostname()))
	if err != nil {
		return "", fmt.Errorf("deployment: vercel: %w", err)
	}
	if v.TeamID != "" {
		api.RawQuery = url.Values{"teamId": {v.TeamID}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+v.Token)
	req.Header.Set("Accept", "application/json")
	client := v.Client
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("deployment: vercel: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("deployment: vercel: %s answered %d", api.Path, resp.StatusCode)
	}
	var d vercelDeployment
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&d); err != nil {
		return "", fmt.Errorf("deployment: vercel: %w", err)
	}
	if d.ReadyState != "READY" {
		return "", fmt.Errorf("deployment: vercel: deployment %s is %s, not READY", u.Hostname(), d.ReadyState)
	}
	for _, k := range []string{"githubCommitSha", "gitlabCommitSha", "bitbucketCommitSha"} {
		if s := strings.TrimSpace(d.Meta[k]); s != "" {
			return s, nil
		}
	}
	return "", fmt.Errorf("deployment: vercel: deployment %s states no commit (not built from git)", u.Hostname())
}
