package deployment_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/deployment"
	"github.com/signoff/signoff/internal/verify"
)

type fixed string

func (f fixed) CommitSHA(context.Context, string) (string, error) { return string(f), nil }

// A deployment that has no /__verification is measured when its platform states the
// expected commit, and refused (nothing measured) when it states another.
func TestVerifierReadsTheCommitFromTheDeploymentSource(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__verification" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("<main>hi</main>"))
	}))
	defer app.Close()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("cd", 20)
	crit := contracts.Criterion{ID: "home", Description: "home answers", Route: "/", MaxRuntimeMS: 5000,
		RequiredArtifacts: []string{contracts.ArtifactObserved}, Assert: contracts.Assertion{Kind: contracts.KindHTTP, Status: 200}}
	for _, tc := range []struct {
		name    string
		src     deployment.Source
		results int
	}{
		{"states the expected commit", fixed(want), 1},
		{"states another", fixed(strings.Repeat("ef", 20)), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &verify.Verifier{Key: key, Commit: tc.src}
			ev, err := v.Verify(context.Background(), verify.Request{ContractID: "c-deploy", ContractHash: strings.Repeat("2", 64), Attempt: 1,
				Criteria: []contracts.Criterion{crit}, EvidencePolicy: contracts.EvidencePolicy{Required: []string{contracts.ArtifactObserved}},
				Verifier: verify.Ref(), ExpectedSHA: want, PreviewURL: app.URL, OutDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if len(ev.Results) != tc.results {
				t.Fatalf("runtime SHA %q: %d results, want %d", ev.RuntimeSHA, len(ev.Results), tc.results)
			}
		})
	}
}
