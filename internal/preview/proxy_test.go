package preview

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/verify"
	"github.com/signoff/signoff/policy"
)

// The tiny app's /__verification case, replaced to make apps that have no such route, or
// that claim a commit of their own.
const tinyVerificationCase = `    case "/__verification": return sha ? json(200, { commit_sha: sha }) : json(404, { error: "no sha" });
`

func tinyServerWith(t *testing.T, verificationCase string) string {
	t.Helper()
	src := tinyApp["server.js"]
	if !strings.Contains(src, tinyVerificationCase) {
		t.Fatal("tinyApp's server.js no longer has the /__verification case this test replaces")
	}
	return strings.Replace(src, tinyVerificationCase, verificationCase, 1)
}

// An app with no /__verification route: the proxy states the built commit, and every other
// path reaches the app unchanged.
func TestProxyStatesTheBuiltCommitForAnAppWithoutARoute(t *testing.T) {
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	noRoute := commit(t, repo, map[string]string{"server.js": tinyServerWith(t, "")}, "no verification route")
	l := newTinyLauncher(t, root, nil)

	job, err := l.Prepare(context.Background(), repo, noRoute, Options{})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer l.Stop(job)
	if code, _ := getText(t, job.AppURL+VerificationPath); code != http.StatusNotFound {
		t.Fatalf("the app itself answers %s with %d; this test needs an app without the route", VerificationPath, code)
	}
	if code, sha := servedSHA(t, job.URL); code != 200 || sha != noRoute {
		t.Fatalf("%s through the proxy = %d %q, want 200 %s", VerificationPath, code, sha, noRoute)
	}
	if job.RuntimeSHA != noRoute {
		t.Errorf("RuntimeSHA %q, want %s", job.RuntimeSHA, noRoute)
	}
	var who struct {
		Built string `json:"built"`
	}
	if code := getJSON(t, job.URL+"/whoami", &who); code != 200 || who.Built != "built from one" {
		t.Errorf("/whoami through the proxy = %d %+v", code, who)
	}
	if code, _ := getText(t, job.URL+"/nowhere"); code != http.StatusNotFound {
		t.Errorf("the app's own 404 became %d through the proxy", code)
	}
	// The Host header reaches the app as the verifier sent it.
	var env map[string]string
	getJSON(t, job.URL+"/env", &env)
	if env["SIGNOFF_COMMIT_SHA"] != noRoute {
		t.Errorf("the app was not told SIGNOFF_COMMIT_SHA: %q", env["SIGNOFF_COMMIT_SHA"])
	}

	l.Stop(job)
	if _, err := http.Get(job.URL + VerificationPath); err == nil {
		t.Error("the proxy still answers after Stop")
	}
}

// An app that answers /__verification with another commit than the one built is refused:
// the proxy states no commit, the verifier measures nothing, and the policy says
// verification_error. In the stale case the app's claim is the very commit the verifier
// expects, the worst case: it must not pass for the stale build that is actually served.
func TestAppClaimingAnotherCommitIsAVerificationError(t *testing.T) {
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	impl := commit(t, repo, map[string]string{"version.txt": "two\n"}, "implementation")
	// A later commit whose app states a commit of its own (read from claim.txt): impl's.
	lying := commit(t, repo, map[string]string{
		"claim.txt": impl + "\n",
		"server.js": tinyServerWith(t, `    case "/__verification": return json(200, { commit_sha: fs.readFileSync("claim.txt", "utf8").trim() });
`),
	}, "app states its own commit")
	l := newTinyLauncher(t, root, nil)
	c, hash := w1Contract(t)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name     string
		prepare  string
		expected string // the commit the verifier is asked for
	}{
		{name: "own claim", prepare: lying, expected: lying},
		// A stale deployment: what was built is not the commit the verifier expects, and the
		// app claims the expected one.
		{name: "stale build claiming the expected commit", prepare: lying, expected: impl},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := l.Prepare(context.Background(), repo, tc.prepare, Options{})
			if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			defer l.Stop(job)
			if job.SHA != lying {
				t.Fatalf("built %s, want %s", job.SHA, lying)
			}
			if job.RuntimeSHA != "" {
				t.Errorf("RuntimeSHA %q, want none: the app contradicts the build", job.RuntimeSHA)
			}
			var body verificationBody
			code := getJSON(t, job.URL+VerificationPath, &body)
			if code != http.StatusConflict || body.CommitSHA != "" || body.AppCommitSHA != impl || !strings.Contains(body.Error, lying) {
				t.Fatalf("%s = %d %+v, want 409 naming the app's %s and the built %s", VerificationPath, code, body, impl, lying)
			}

			// The verifier and the policy, as the workflow runs them.
			v := &verify.Verifier{Config: verify.Config{DriverDir: t.TempDir()}, Key: key}
			ev, err := v.Verify(context.Background(), verify.Request{
				ContractID: c.ContractID, ContractHash: hash, Attempt: 1, Criteria: c.Criteria,
				EvidencePolicy: c.EvidencePolicy, Verifier: c.Verifier, ExpectedSHA: tc.expected,
				PreviewURL: job.URL, OutDir: t.TempDir(),
			})
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if len(ev.Results) != 0 || ev.RuntimeSHA != "" {
				t.Errorf("runtime SHA %q, %d criteria measured against an app that contradicts the build", ev.RuntimeSHA, len(ev.Results))
			}
			d := policy.Decide(*c, policy.Expectation{
				ContractHash: hash, ImplementationSHA: tc.expected, VerifierPublicKey: pub, VerifierDigest: verify.Digest(),
				Build: contracts.BuildResult{Passed: true},
			}, ev)
			if d.Verdict != contracts.VerificationError {
				t.Fatalf("verdict %s (%s), want %s", d.Verdict, d.Summary(), contracts.VerificationError)
			}
			t.Logf("verdict: %s", d.Summary())
		})
	}
}

// w1Contract is prepared run W1's contract, frozen against this verifier.
func w1Contract(t *testing.T) (*contracts.Contract, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "runs", "W1", "contract.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := contracts.Load(data, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Verifier = verify.Ref()
	hash, err := contracts.Hash(*c)
	if err != nil {
		t.Fatal(err)
	}
	return c, hash
}
