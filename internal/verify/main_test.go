package verify

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/sitetest"
)

// One driver and one browser for the whole package: starting them costs seconds, and every
// criterion still gets fresh browser contexts.
var (
	testDriver    *Driver
	testDriverTmp string // the driver's TMPDIR
	testSource    *Shared
	testSetupErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if testing.Short() {
		testSetupErr = fmt.Errorf("-short mode runs no browser")
		return m.Run()
	}
	cfg := DefaultConfig()
	if err := cfg.CheckSetup(true); err != nil {
		testSetupErr = err
		return m.Run()
	}
	// The driver gets a temporary folder of its own: TestAPageWithoutFramesIsMeasuredAgain-
	// OnANewPage looks there for the trace folders a page may leave, and the suite's other
	// packages, verifying beside this one, make theirs in the shared one.
	driverTmp, err := os.MkdirTemp("", "verify-driver-")
	if err != nil {
		testSetupErr = err
		return m.Run()
	}
	defer os.RemoveAll(driverTmp)
	// As /tmp is: the browser the driver launches runs as another user and keeps its profile
	// there.
	if err := os.Chmod(driverTmp, 0o1777); err != nil {
		testSetupErr = err
		return m.Run()
	}
	testDriverTmp = driverTmp
	prev, had := os.LookupEnv("TMPDIR")
	_ = os.Setenv("TMPDIR", driverTmp)
	d, err := StartDriver(cfg)
	if had {
		_ = os.Setenv("TMPDIR", prev)
	} else {
		_ = os.Unsetenv("TMPDIR")
	}
	if err != nil {
		testSetupErr = err
		return m.Run()
	}
	defer d.Stop()
	testDriver = d
	testSource = &Shared{Source: Local{Chromium: cfg.Chromium}}
	defer testSource.Close()
	return m.Run()
}

// needBrowser skips in -short mode and fails, naming the setup task, when the browser
// pieces are missing.
func needBrowser(t testing.TB) {
	t.Helper()
	if testSetupErr == nil {
		return
	}
	if testing.Short() {
		t.Skipf("browser test skipped: %v (without -short it runs; it needs `%s`)", testSetupErr, SetupTask)
	}
	t.Fatalf("browser setup missing: %v\nrun `%s` from the repository root", testSetupErr, SetupTask)
}

const (
	testSHA  = "1111111111111111111111111111111111111111"
	testHash = "2222222222222222222222222222222222222222222222222222222222222222"
)

var testKey = ed25519.NewKeyFromSeed([]byte("signoff-verify-test-key-32-bytes"))

// site serves test pages on 127.0.0.1 plus /__verification with the given SHA ("" = 404).
func site(t testing.TB, sha string, pages map[string]string, extra map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	return sitetest.Serve(t, sha, pages, extra)
}

// page wraps a body in a minimal HTML document. It declares a device-width viewport, as every
// Next.js page does: without one a phone lays the page out 980 px wide and zooms it out.
func page(head, body string) string {
	return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>` +
		`<style>body{font-family:sans-serif;margin:0;padding:8px}</style>` + head + `</head><body>` + body + `</body></html>`
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// testLogger is the verifier's debug log in t's output with -v, and nil (discarded) without.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// forSubtest is v logging to t. A parallel subtest runs after its parent's function has
// returned, and what a verifier made there logs to the parent is then lost.
func forSubtest(t testing.TB, v *Verifier) *Verifier {
	c := *v
	c.Logger = testLogger(t)
	return &c
}

// testBrowserSession is the tests' browser, closed when t ends.
func testBrowserSession(t testing.TB) *BrowserSession {
	t.Helper()
	needBrowser(t)
	sess, err := testSource.Open(context.Background(), testDriver.Playwright())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// devicePage is a new page, in a context of its own with the device the verifier gives vp;
// both are closed when t ends.
func devicePage(t testing.TB, sess *BrowserSession, vp contracts.Viewport) (playwright.BrowserContext, playwright.Page) {
	t.Helper()
	opts := playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: vp.Width, Height: vp.Height}}
	deviceFor(vp, sess.Info.Version).contextOptions(&opts)
	bctx, err := sess.Browser.NewContext(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bctx.Close() })
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	return bctx, page
}

func testVerifier(t testing.TB) *Verifier {
	t.Helper()
	needBrowser(t)
	logger := testLogger(t)
	return &Verifier{Config: DefaultConfig(), Key: testKey, Driver: testDriver, Source: testSource, Logger: logger}
}

// crit is a browser criterion at one or more viewports.
func crit(id, route string, a contracts.Assertion, vps ...contracts.Viewport) contracts.Criterion {
	if len(vps) == 0 {
		vps = []contracts.Viewport{mobile}
	}
	return contracts.Criterion{
		ID: id, Description: id, Route: route,
		Viewport: &vps[0], ExtraViewports: vps[1:],
		Assert: a, MaxRuntimeMS: 15000,
		RequiredArtifacts: []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot},
	}
}

var (
	mobile  = contracts.Viewport{Width: 390, Height: 844}
	desktop = contracts.Viewport{Width: 1440, Height: 1000}
)

func request(t testing.TB, base string, criteria ...contracts.Criterion) Request {
	return Request{
		ContractID:     "c-test",
		ContractHash:   testHash,
		Attempt:        1,
		Criteria:       criteria,
		EvidencePolicy: contracts.EvidencePolicy{Required: []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot}},
		Verifier:       Ref(),
		ExpectedSHA:    testSHA,
		PreviewURL:     base,
		OutDir:         t.TempDir(),
	}
}

// verify runs a request and checks what every evidence must satisfy: schema-valid, signed,
// decodable, one result per criterion in order.
func verify(t testing.TB, v *Verifier, req Request) *contracts.Evidence {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ev, err := v.Verify(ctx, req)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	back, err := contracts.DecodeEvidence(raw)
	if err != nil {
		t.Fatalf("evidence does not decode: %v\n%s", err, raw)
	}
	if err := back.VerifySignature(testKey.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("signature: %v", err)
	}
	return ev
}

func result(t testing.TB, ev *contracts.Evidence, id string) contracts.CriterionResult {
	t.Helper()
	for _, r := range ev.Results {
		if r.CriterionID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return contracts.CriterionResult{}
}

// wantStatus checks a result's status, printing the observations when it differs.
func wantStatus(t testing.TB, ev *contracts.Evidence, id, status string) contracts.CriterionResult {
	t.Helper()
	r := result(t, ev, id)
	if r.Status != status {
		obs, _ := json.MarshalIndent(r.Observed, "", "  ")
		t.Errorf("%s: status %s, want %s (error %q, page errors %q, console errors %q)\nobserved: %s",
			id, r.Status, status, r.Error, r.PageErrors, r.ConsoleErrors, obs)
	}
	return r
}
