package workers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"
	"go.temporal.io/api/serviceerror"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/github"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/sentrygate"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// newRemote makes a one-commit repository acme/web and its bare remote under the data dir's
// remotes, and returns the base commit.
func newRemote(t *testing.T, cfg workers.Config) string {
	t.Helper()
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "index.html"), []byte("<h1>watchlist</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "index.html"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", "base"}} {
		if _, err := localgit.Git(ctx, src, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (localgit.Remotes{Root: cfg.Layout().Remotes}).Ensure(ctx, "acme", "web", src); err != nil {
		t.Fatal(err)
	}
	out, err := localgit.Git(ctx, src, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// secretVars are credentials only the control and verify queues may hold.
var secretVars = []string{"STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_WEBHOOK_SECRET",
	"SENTRY_AUTH_TOKEN", "SENTRY_DSN", "SIGNOFF_AGENT_SEED", "AGENTVERSE_API_KEY"}

// containsValue reports whether any string reachable from v contains needle.
func containsValue(v reflect.Value, needle string, seen map[uintptr]bool) bool {
	switch v.Kind() {
	case reflect.String:
		return strings.Contains(v.String(), needle)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		if v.Kind() == reflect.Pointer {
			if seen[v.Pointer()] {
				return false
			}
			seen[v.Pointer()] = true
		}
		return containsValue(v.Elem(), needle, seen)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if containsValue(v.Field(i), needle, seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if containsValue(v.Index(i), needle, seen) {
				return true
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if containsValue(k, needle, seen) || containsValue(v.MapIndex(k), needle, seen) {
				return true
			}
		}
	}
	return false
}

// TestExecuteQueueNeverSeesSecrets sets every credential in this process's environment, as
// `signoff dev` (one process, every queue) has them, builds the execute queue exactly as
// dev does, and runs a real CLI that dumps its environment into the commit it makes. No
// credential reaches the execute queue's activity struct or the CLI; the variable the
// operator passed through does (so the dump is real).
func TestExecuteQueueNeverSeesSecrets(t *testing.T) {
	values := map[string]string{}
	for _, name := range secretVars {
		values[name] = fmt.Sprintf("secret-%s-%d", strings.ToLower(name), time.Now().UnixNano())
		t.Setenv(name, values[name])
	}
	t.Setenv("MODEL_API_KEY", "visible-model-key")
	t.Setenv(workers.EnvExecutorPassEnv, "MODEL_API_KEY")
	t.Setenv(workers.EnvExecutorCommand, `/bin/sh -c "env > env-dump.txt" sh {prompt_file}`)

	s, err := settings.Load(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := workers.Config{DataDir: t.TempDir(), Allow: []string{"acme/*"}, Settings: s}
	base := newRemote(t, cfg)
	ex, err := workers.NewExecutor(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ex.(*executor.Command); !ok {
		t.Fatalf("with %s set the executor is %T", workers.EnvExecutorCommand, ex)
	}
	e, err := workers.NewExecute(cfg, workers.ExecuteOptions{Executor: ex, Preview: workers.PreviewStatic})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range values {
		if containsValue(reflect.ValueOf(e), v, map[uintptr]bool{}) {
			t.Errorf("the execute queue's activities hold %s", name)
		}
	}
	res, err := e.RunExecutor(context.Background(), capability.ExecRequest{ContractID: "c-secrets", ContractHash: strings.Repeat("ab", 32),
		Attempt: 1, Goal: "dump the environment", Repo: contracts.Repo{Owner: "acme", Name: "web", BaseCommitSHA: base}, ParentSHA: base})
	if err != nil {
		t.Fatal(err)
	}
	remote, _ := (localgit.Remotes{Root: cfg.Layout().Remotes}).Path("acme", "web")
	dump, err := localgit.Git(context.Background(), remote, "show", res.CommitSHA+":env-dump.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump, "MODEL_API_KEY=visible-model-key") {
		t.Fatalf("the pass-through variable is missing, so the dump proves nothing:\n%s", dump)
	}
	for name, v := range values {
		if strings.Contains(dump, v) || strings.Contains(dump, name+"=") {
			t.Errorf("the coding CLI saw %s", name)
		}
	}
	if strings.Contains(dump, workers.EnvExecutorCommand) {
		t.Error("the coding CLI saw Signoff's own configuration")
	}
}

func TestNewExecutorChoosesAndRefuses(t *testing.T) {
	base := workers.Config{DataDir: t.TempDir(), Allow: []string{"acme/*"}}
	// with is base configured by kv, as the settings read them from the environment.
	with := func(kv ...string) workers.Config {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		s, err := settings.Load(func(k string) string { return m[k] })
		if err != nil {
			t.Fatal(err)
		}
		c := base
		c.Settings = s
		return c
	}
	if ex, err := workers.NewExecutor(base, ""); err != nil {
		t.Fatal(err)
	} else if _, ok := ex.(*executor.Prepared); !ok {
		t.Fatalf("default executor is %T", ex)
	}
	if ex, err := workers.NewExecutor(with(workers.EnvExecutorCommand, "claude -p {prompt}"), workers.ExecutorPrepared); err != nil {
		t.Fatal(err)
	} else if _, ok := ex.(*executor.Prepared); !ok {
		t.Fatalf("--executor prepared gave %T", ex)
	}
	c, err := workers.NewCommandExecutor(with(workers.EnvExecutorCommand, "claude -p {prompt}",
		workers.EnvExecutorTimeout, "10m", workers.EnvExecutorPassEnv, "ANTHROPIC_API_KEY, HTTPS_PROXY"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 10*time.Minute || strings.Join(c.PassEnv, ",") != "ANTHROPIC_API_KEY,HTTPS_PROXY" || c.Progress == nil ||
		c.Sandbox == nil || c.Network != sandbox.NetEgress {
		t.Fatalf("command executor %+v", c)
	}
	if c, err := workers.NewCommandExecutor(with(workers.EnvExecutorCommand, "claude -p {prompt}", workers.EnvExecutorNetwork, "none")); err != nil || c.Network != sandbox.NetNone {
		t.Fatalf("%s=none: %v %+v", workers.EnvExecutorNetwork, err, c)
	}
	// Values the settings refuse (a bad timeout, an unknown network) never reach here; what
	// only the executor can judge is refused by it.
	for name, cfg := range map[string]workers.Config{
		"command without template": with(),
		"template without prompt":  with(workers.EnvExecutorCommand, "codex exec"),
		"timeout past activity":    with(workers.EnvExecutorCommand, "codex {prompt}", workers.EnvExecutorTimeout, "45m"),
		"secret pass-through":      with(workers.EnvExecutorCommand, "codex {prompt}", workers.EnvExecutorPassEnv, "STRIPE_SECRET_KEY"),
	} {
		if _, err := workers.NewExecutor(cfg, workers.ExecutorCommand); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := workers.NewExecutor(base, "magic"); err == nil {
		t.Error("unknown executor kind accepted")
	}
}

func TestNewGateIsNilOrSentry(t *testing.T) {
	g, err := workers.NewGate(settings.Sentry{})
	if err != nil || g != nil {
		t.Fatalf("no token: gate %#v, %v (want a nil interface: page errors only)", g, err)
	}
	if _, err := workers.NewGate(settings.Sentry{AuthToken: "t"}); err == nil {
		t.Fatal("a token without org and project must be an error, not a silent pass")
	}
	g, err = workers.NewGate(settings.Sentry{AuthToken: "t", Org: "acme", Project: "web"})
	if _, ok := g.(*sentrygate.Gate); err != nil || !ok {
		t.Fatalf("configured gate %T, %v", g, err)
	}
	if _, err := workers.NewGate(settings.Sentry{AuthToken: "t", Org: "acme", Project: "web", URL: "http://sentry.example.com"}); err == nil {
		t.Fatal("a token would travel over plain http")
	}
}

// signals records what webhooks and watchers tell workflows.
type signals struct {
	mu   sync.Mutex
	got  []string // workflowID signal arg
	fail error
}

func (s *signals) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.got = append(s.got, fmt.Sprintf("%s %s %+v", id, name, arg))
	return nil
}

func (s *signals) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func TestHeadWatchSignalsAPushAfterVerification(t *testing.T) {
	ctx := context.Background()
	cfg := workers.Config{DataDir: t.TempDir()}
	base := newRemote(t, cfg)
	l := workers.NewControlPlane(cfg)
	remote, _ := l.Deliverer.Remotes.Path("acme", "web")
	branch := executor.Branch("c-head")
	if _, err := localgit.Git(ctx, remote, "branch", branch, base); err != nil {
		t.Fatal(err)
	}
	repo := contracts.Repo{Owner: "acme", Name: "web", BaseCommitSHA: base}
	if _, err := l.Deliverer.Publish(ctx, capability.PublishRequest{ContractID: "c-head", ContractHash: "h", Goal: "g", Repo: repo,
		Branch: branch, CommitSHA: base, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	put := func(state string) {
		if err := l.Index.Put(capability.IndexEntry{ContractID: "c-head", WorkflowID: contractapi.WorkflowID("c-head"), State: state}); err != nil {
			t.Fatal(err)
		}
	}
	sig := &signals{}
	w := &workers.HeadWatch{Signal: contractclient.NewSignals(sig), Index: l.Index, PRs: l.Deliverer}
	check := func(want int) {
		t.Helper()
		if n, err := w.Check(ctx); err != nil || n != want {
			t.Fatalf("check: %d signals, %v; want %d", n, err, want)
		}
	}
	put(contracts.StateMergeEligible)
	check(0) // the head is the published commit

	// Someone pushes to the branch with plain git.
	clone := filepath.Join(t.TempDir(), "clone")
	for _, args := range [][]string{{"clone", "--quiet", "--branch", branch, remote, clone}} {
		if _, err := localgit.Git(ctx, filepath.Dir(clone), args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(clone, "extra.txt"), []byte("unverified\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "extra.txt"}, {"-c", "user.name=o", "-c", "user.email=o@example.invalid", "commit", "--quiet", "-m", "x"},
		{"push", "--quiet", "origin", "HEAD:refs/heads/" + branch}} {
		if _, err := localgit.Git(ctx, clone, args...); err != nil {
			t.Fatal(err)
		}
	}
	head, _ := localgit.Head(ctx, remote, branch)
	put(contracts.StatePaymentCaptured)
	check(0) // not merge-eligible: nothing to revoke
	put(contracts.StateMergeEligible)
	check(1)
	check(0) // told once per head
	got := sig.list()
	if len(got) != 1 || !strings.Contains(got[0], contractapi.SignalPRHeadChanged) || !strings.Contains(got[0], head) ||
		!strings.HasPrefix(got[0], contractapi.WorkflowID("c-head")+" ") {
		t.Fatalf("signals %v", got)
	}
}

func stripeEvent(t *testing.T, typ string, obj string) []byte {
	t.Helper()
	return []byte(fmt.Sprintf(`{"id":"evt_%d","object":"event","api_version":"2023-10-16","created":%d,"type":%q,"data":{"object":%s}}`,
		time.Now().UnixNano(), time.Now().Unix(), typ, obj))
}

func post(t *testing.T, h http.Handler, body []byte, header map[string]string) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, r)
	return rw.Code
}

func TestWebhooksSignalTheWorkflow(t *testing.T) {
	const secret = "whsec_test_services"
	gh, err := github.New(github.Config{Token: "t", Remotes: localgit.Remotes{Root: t.TempDir()}, Store: t.TempDir(), Allow: executor.Allowlist{"acme/*"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &workers.Services{StripeWebhookSecret: secret, GitHub: gh, GitHubWebhookSecret: "gh-secret"}
	sig := &signals{}
	hooks, err := s.Webhooks(contractclient.NewSignals(sig))
	if err != nil {
		t.Fatal(err)
	}
	stripeHook, ghHook := hooks[workers.StripeWebhookPath], hooks[workers.GitHubWebhookPath]
	if stripeHook == nil || ghHook == nil {
		t.Fatalf("mounted %v", hooks)
	}
	session := `{"id":"cs_test_1","object":"checkout.session","metadata":{"contract_id":"c-pay","contract_hash":"abc"},"payment_intent":"pi_test_1"}`
	signed := func(body []byte, at time.Time) map[string]string {
		p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
		return map[string]string{"Stripe-Signature": p.Header}
	}
	body := stripeEvent(t, "checkout.session.completed", session)
	if code := post(t, stripeHook, body, map[string]string{"Stripe-Signature": "t=1,v1=00"}); code != http.StatusBadRequest {
		t.Fatalf("bad signature: HTTP %d", code)
	}
	if code := post(t, stripeHook, body, signed(body, time.Now().Add(-time.Hour))); code != http.StatusBadRequest {
		t.Fatalf("old timestamp: HTTP %d", code)
	}
	tampered := append([]byte{}, body...)
	tampered = []byte(strings.Replace(string(tampered), "c-pay", "c-pwn", 1))
	if code := post(t, stripeHook, tampered, signed(body, time.Now())); code != http.StatusBadRequest {
		t.Fatalf("tampered body: HTTP %d", code)
	}
	if got := sig.list(); len(got) != 0 {
		t.Fatalf("a refused delivery signalled: %v", got)
	}
	if code := post(t, stripeHook, body, signed(body, time.Now())); code != http.StatusOK {
		t.Fatalf("valid event: HTTP %d", code)
	}
	got := sig.list()
	if len(got) != 1 || !strings.HasPrefix(got[0], "contract-c-pay "+contractapi.SignalPaymentAuthorized) ||
		!strings.Contains(got[0], "cs_test_1") || !strings.Contains(got[0], "stripe-webhook") {
		t.Fatalf("signals %v", got)
	}
	// The same authorization reported again (amount capturable) is not signalled twice.
	capturable := stripeEvent(t, "payment_intent.amount_capturable_updated",
		`{"id":"pi_test_1","object":"payment_intent","amount_capturable":1500,"metadata":{"contract_id":"c-pay","contract_hash":"abc"}}`)
	if code := post(t, stripeHook, capturable, signed(capturable, time.Now())); code != http.StatusOK || len(sig.list()) != 1 {
		t.Fatalf("second report of one authorization: HTTP %d, signals %v", code, sig.list())
	}
	// A capture is Signoff's own doing: acknowledged, nothing signalled.
	captured := stripeEvent(t, "payment_intent.succeeded", `{"id":"pi_test_1","object":"payment_intent","metadata":{"contract_id":"c-pay","contract_hash":"abc"}}`)
	if code := post(t, stripeHook, captured, signed(captured, time.Now())); code != http.StatusOK || len(sig.list()) != 1 {
		t.Fatalf("capture event: HTTP %d, signals %v", code, sig.list())
	}
	// A contract with no workflow is acknowledged (no redelivery loop); an outage is not.
	sig.fail = serviceerror.NewNotFound("workflow not found")
	other := stripeEvent(t, "checkout.session.completed", strings.Replace(session, "c-pay", "c-gone", 1))
	if code := post(t, stripeHook, other, signed(other, time.Now())); code != http.StatusOK {
		t.Fatalf("unknown contract: HTTP %d", code)
	}
	sig.fail = errors.New("temporal unavailable")
	third := stripeEvent(t, "checkout.session.completed", strings.Replace(session, "c-pay", "c-later", 1))
	if code := post(t, stripeHook, third, signed(third, time.Now())); code != http.StatusInternalServerError {
		t.Fatalf("signal failure: HTTP %d (want 500 so Stripe delivers again)", code)
	}
	sig.fail = nil

	// GitHub: a synchronize on signoff/<contract> signals pr_head_changed.
	pr := `{"action":"synchronize","number":7,"before":"1111111111111111111111111111111111111111","after":"2222222222222222222222222222222222222222",` +
		`"pull_request":{"head":{"ref":"signoff/c-pay","sha":"2222222222222222222222222222222222222222","repo":{"full_name":"acme/web"}}},"repository":{"full_name":"acme/web"}}`
	mac := hmac.New(sha256.New, []byte("gh-secret"))
	mac.Write([]byte(pr))
	ghHeader := map[string]string{"X-GitHub-Event": "pull_request", "Content-Type": "application/json",
		"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}
	if code := post(t, ghHook, []byte(pr), map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": "sha256=00"}); code != http.StatusUnauthorized {
		t.Fatalf("unsigned GitHub delivery: HTTP %d", code)
	}
	if code := post(t, ghHook, []byte(pr), ghHeader); code != http.StatusOK {
		t.Fatalf("GitHub delivery: HTTP %d", code)
	}
	got = sig.list()
	if last := got[len(got)-1]; !strings.HasPrefix(last, "contract-c-pay "+contractapi.SignalPRHeadChanged) || !strings.Contains(last, "2222222222") {
		t.Fatalf("signals %v", got)
	}
}

// stripeMock finds stripe-mock or skips (-short) / fails with the setup command.
func stripeMock(t *testing.T) string {
	t.Helper()
	p, err := localstripe.FindStripeMock("")
	if err != nil {
		if testing.Short() {
			t.Skipf("skipping in -short mode: %v", err)
		}
		t.Fatalf("this test needs stripe-mock: %v", err)
	}
	return p
}

func TestOpenServicesFromTheEnvironment(t *testing.T) {
	stripeMock(t)
	ctx := context.Background()
	cfg := workers.Config{DataDir: t.TempDir(), LoopbackURL: "http://127.0.0.1:8480", Allow: []string{"acme/*"}}

	// Default: the local Stripe test double, labelled as moving no money.
	local, err := workers.OpenServices(ctx, cfg, workers.ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	if local.LocalStripe == nil || !local.Payments.Local || local.Payments.Provider != payment.ProviderLocal ||
		!strings.Contains(local.PaymentLabel, "no money moves") || local.GitHub != nil {
		t.Fatalf("local default: %+v", local)
	}
	l := workers.NewControlPlane(cfg)
	local.Apply(l)
	if l.Payments != local.Payments || l.Publisher != nil {
		t.Fatalf("applied: %+v", l)
	}

	// STRIPE_SECRET_KEY (+ base, webhook secret): the same client against "Stripe" (here the
	// double standing in for api.stripe.com), not labelled local.
	env := map[string]string{
		workers.EnvStripeSecretKey: local.LocalStripe.APIKey(), workers.EnvStripeAPIBase: local.LocalStripe.URL(),
		workers.EnvStripeWebhookSecret: "whsec_configured", workers.EnvGitHubToken: "ghp_test", workers.EnvGitHubWebhookSecret: "gh-secret",
	}
	configured := cfg
	configured.Settings = loadSettings(t, env)
	real, err := workers.OpenServices(ctx, configured, workers.ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	if real.LocalStripe != nil || real.Payments.Local || real.Payments.Provider != payment.ProviderStripe ||
		real.StripeWebhookSecret != "whsec_configured" || real.GitHub == nil || real.GitHubWebhookSecret != "gh-secret" {
		t.Fatalf("configured: %+v", real)
	}
	ps, err := real.Payments.Authorize(ctx, capability.AuthorizeRequest{ContractID: "c-real", ContractHash: strings.Repeat("cd", 32),
		Price: contracts.Price{Amount: 1200, Currency: "usd"}})
	if err != nil || ps.Local || ps.CheckoutSessionID == "" {
		t.Fatalf("authorize with the configured key: %+v, %v", ps, err)
	}
	l = workers.NewControlPlane(cfg)
	real.Apply(l)
	ctl, err := workers.NewControl(cfg, nil, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ctl.Deliverer.(*github.Deliverer); !ok {
		t.Fatalf("control deliverer with a GitHub token: %T", ctl.Deliverer)
	}
	if lines := strings.Join(real.Describe(cfg), "\n"); strings.Contains(lines, "ghp_test") || strings.Contains(lines, local.LocalStripe.APIKey()) {
		t.Fatalf("a secret is printed: %s", lines)
	}

	for name, bad := range map[string]map[string]string{
		"not a key":          {workers.EnvStripeSecretKey: "pk_test_publishable"},
		"key over plain web": {workers.EnvStripeSecretKey: "sk_test_x", workers.EnvStripeAPIBase: "http://stripe.example.com"},
		"github off-list":    {workers.EnvGitHubToken: "t"},
	} {
		c := cfg
		if name == "github off-list" {
			c.Allow = nil
		}
		c.Settings = loadSettings(t, bad)
		if s, err := workers.OpenServices(ctx, c, workers.ServiceOptions{}); err == nil {
			s.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}

// loadSettings reads env as the process's settings would read it from the environment.
func loadSettings(t *testing.T, env map[string]string) settings.Settings {
	t.Helper()
	s, err := settings.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMissingStripeMockNamesTheSetupTask(t *testing.T) {
	cfg := workers.Config{DataDir: t.TempDir(), Settings: loadSettings(t, map[string]string{"SIGNOFF_STRIPE_MOCK": filepath.Join(t.TempDir(), "no-stripe-mock")})}
	_, err := workers.OpenServices(context.Background(), cfg, workers.ServiceOptions{})
	if err == nil || !strings.Contains(err.Error(), "go tool task stripe:setup") {
		t.Fatalf("error %v; want one naming `go tool task stripe:setup`", err)
	}
}
