package deployment

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The Vercel source asks for the deployment by its host, with the token and team, and
// states the commit only for a READY deployment built from git.
func TestVercelStatesTheDeployedCommit(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	answers := map[string]string{
		"ready.vercel.app":    `{"readyState":"READY","url":"ready.vercel.app","meta":{"githubCommitSha":"` + sha + `","githubCommitRef":"signoff/c1"}}`,
		"building.vercel.app": `{"readyState":"BUILDING","meta":{"githubCommitSha":"` + sha + `"}}`,
		"cli.vercel.app":      `{"readyState":"READY","meta":{}}`,
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || r.URL.Query().Get("teamId") != "team_1" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		body, ok := answers[strings.TrimPrefix(r.URL.Path, "/v13/deployments/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer api.Close()
	var src Source = Vercel{Token: "tok", TeamID: "team_1", BaseURL: api.URL}
	ctx := context.Background()
	if got, err := src.CommitSHA(ctx, "https://ready.vercel.app/watchlist"); err != nil || got != sha {
		t.Fatalf("ready: %q %v", got, err)
	}
	for _, u := range []string{"https://building.vercel.app", "https://cli.vercel.app", "https://gone.vercel.app", "not a url"} {
		if got, err := src.CommitSHA(ctx, u); err == nil || got != "" {
			t.Errorf("%s: %q %v, want no commit", u, got, err)
		}
	}
	if _, err := (Vercel{Token: "wrong", TeamID: "team_1", BaseURL: api.URL}).CommitSHA(ctx, "https://ready.vercel.app"); err == nil {
		t.Error("a refused token stated a commit")
	}
}
