package verify

import (
	"archive/zip"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
)

// The preview must say which commit it runs; otherwise nothing is measured, and the SHA as read
// (never the expected one) goes into the evidence.
func TestRuntimeSHAGate(t *testing.T) {
	// No driver and no browser: a gate that let the run through would fail to start one, or
	// produce results, and the test would see it.
	v := &Verifier{Config: Config{DriverDir: t.TempDir()}, Key: testKey}
	other := "3333333333333333333333333333333333333333"
	closed := site(t, testSHA, nil, nil)
	closedURL := closed.URL
	closed.Close()
	cases := []struct {
		name, body string
		status     int
		url        string
		want       string
	}{
		{name: "missing", status: 404, want: ""},
		{name: "different", body: `{"commit_sha":"` + other + `"}`, status: 200, want: other},
		{name: "not-a-string", body: `{"commit_sha":123}`, status: 200, want: ""},
		{name: "other-key", body: `{"sha":"` + testSHA + `"}`, status: 200, want: ""},
		{name: "server-error", body: `{"commit_sha":"` + testSHA + `"}`, status: 500, want: ""},
		{name: "not-json", body: testSHA, status: 200, want: ""},
		{name: "unreachable", url: closedURL, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				srv := site(t, "", nil, map[string]http.HandlerFunc{"/__verification": func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(tc.status)
					fmt.Fprint(w, tc.body)
				}})
				url = srv.URL
			}
			req := request(t, url, crit("loads", "/", contracts.Assertion{Kind: contracts.KindLoads}))
			ev := verify(t, v, req)
			if ev.RuntimeSHA != tc.want {
				t.Errorf("runtime_sha %q, want %q", ev.RuntimeSHA, tc.want)
			}
			if ev.ExpectedSHA != testSHA {
				t.Errorf("expected_sha %q", ev.ExpectedSHA)
			}
			if len(ev.Results) != 0 || len(ev.Artifacts) != 0 {
				t.Errorf("measured a preview that does not run the expected commit: %d results", len(ev.Results))
			}
		})
	}
}

// A preview that changes commit during the run is recorded with the later SHA.
func TestRuntimeSHAChangesMidRun(t *testing.T) {
	v := &Verifier{Key: testKey}
	other := "3333333333333333333333333333333333333333"
	var mu sync.Mutex
	reads := 0
	srv := site(t, "", nil, map[string]http.HandlerFunc{
		"/__verification": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			reads++
			sha := testSHA
			if reads > 1 {
				sha = other
			}
			fmt.Fprintf(w, `{"commit_sha":%q}`, sha)
		},
		"/api": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{}`) },
	})
	c := contracts.Criterion{ID: "api", Description: "api", Route: "/api", MaxRuntimeMS: 5000,
		RequiredArtifacts: []string{contracts.ArtifactObserved}, Assert: contracts.Assertion{Kind: contracts.KindHTTP, Status: 200}}
	ev := verify(t, v, request(t, srv.URL, c))
	if ev.RuntimeSHA != other || len(ev.Results) != 1 {
		t.Errorf("runtime_sha %q with %d results, want the later %q", ev.RuntimeSHA, len(ev.Results), other)
	}
}

// A contract frozen against another verifier digest is not measured; the evidence carries the
// real digest so the policy sees the mismatch.
func TestDigestMismatchMeasuresNothing(t *testing.T) {
	v := &Verifier{Config: Config{DriverDir: t.TempDir()}, Key: testKey}
	srv := site(t, testSHA, map[string]string{"/": page(``, `<main>hi</main>`)}, nil)
	req := request(t, srv.URL, crit("loads", "/", contracts.Assertion{Kind: contracts.KindLoads}))
	req.Verifier.Digest = strings.Repeat("0", 64)
	ev := verify(t, v, req)
	if ev.Verifier.Digest != Digest() || len(ev.Results) != 0 || ev.RuntimeSHA != testSHA {
		t.Errorf("digest %s results %d runtime %q", ev.Verifier.Digest, len(ev.Results), ev.RuntimeSHA)
	}
}

func TestDigest(t *testing.T) {
	d := Digest()
	if !hashRe.MatchString(d) || d != contracts.VerifierDigest(probeSource(), "1.64.1") {
		t.Fatalf("digest %q", d)
	}
	// The digest covers the probe and its parameters: changing either changes it.
	saved := probeJS
	probeJS = append(slices.Clone(saved), ' ')
	changed := Digest()
	probeJS = saved
	if changed == d {
		t.Error("the digest does not cover the probe code")
	}
	if _, err := loadParams(); err != nil {
		t.Fatal(err)
	}
}

func TestRequestValidation(t *testing.T) {
	v := &Verifier{Key: testKey}
	good := request(t, "http://127.0.0.1:1", crit("a", "/", contracts.Assertion{Kind: contracts.KindLoads}))
	mutate := map[string]func(r *Request){
		"hash":      func(r *Request) { r.ContractHash = "ABC" },
		"id":        func(r *Request) { r.Criteria[0].ID = "../x" },
		"dup":       func(r *Request) { r.Criteria = append(r.Criteria, r.Criteria[0]) },
		"scheme":    func(r *Request) { r.PreviewURL = "file:///etc/passwd" },
		"userinfo":  func(r *Request) { r.PreviewURL = "http://u:p@127.0.0.1:1" },
		"outdir":    func(r *Request) { r.OutDir = "" },
		"attempt":   func(r *Request) { r.Attempt = 9 },
		"criteria":  func(r *Request) { r.Criteria = nil },
		"contract":  func(r *Request) { r.ContractID = " " },
		"query-url": func(r *Request) { r.PreviewURL = "http://127.0.0.1:1/?x=1" },
		"port":      func(r *Request) { r.PreviewURL = "http://127.0.0.1:99999" },
	}
	for name, m := range mutate {
		r := good
		r.Criteria = slices.Clone(good.Criteria)
		m(&r)
		_, err := v.Verify(context.Background(), r)
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("%s: error %v, want a RequestError", name, err)
		}
	}
	if _, err := (&Verifier{}).Verify(context.Background(), good); err == nil || !strings.Contains(err.Error(), "signing key") {
		t.Errorf("no key: %v", err)
	}
}

// Screenshots and traces are written, digested and named by the results; a criterion with two
// viewports has one trace that replays both.
func TestArtifactsAndProgress(t *testing.T) {
	v := testVerifier(t)
	srv := site(t, testSHA, map[string]string{"/wide": page(``, `<main><h1>Wide</h1>`+wideTable+`</main>`)}, nil)
	c := crit("wide", "/wide", noOverflow, mobile, desktop)
	req := request(t, srv.URL, c)
	req.EvidencePolicy.Required = []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot, contracts.ArtifactTrace}
	var mu sync.Mutex
	var events []string
	req.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, p.Phase+":"+p.Viewport+p.Status)
	}
	ev := verify(t, v, req)
	r := wantStatus(t, ev, "wide", contracts.StatusFail)
	// The two viewports are pages of their own, measured at the same time.
	if got := strings.Join(events, " "); got != "start: viewport:390x844 viewport:1440x1000 done:fail" &&
		got != "start: viewport:1440x1000 viewport:390x844 done:fail" {
		t.Errorf("progress events %q", got)
	}
	if r.Observed["1440x1000/clipped_elements"] != 0.0 || r.Observed["1440x1000/scroll_width"] != 1440.0 {
		t.Errorf("desktop observed %v", r.Observed)
	}
	want := []string{"shot-wide-390x844.png", "shot-wide-1440x1000.png", "trace-wide.zip"}
	if !slices.Equal(r.Artifacts, want) {
		t.Fatalf("result artifacts %v, want %v", r.Artifacts, want)
	}
	for _, a := range ev.Artifacts {
		data, err := os.ReadFile(filepath.Join(req.OutDir, a.Name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != int64(len(data)) || a.Criterion != "wide" {
			t.Errorf("artifact %+v does not match its file", a)
		}
	}
	// The full-page mobile screenshot shows the overflow: it is as wide as the scroll width.
	f, err := os.Open(filepath.Join(req.OutDir, "shot-wide-390x844.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if float64(cfg.Width) != r.Observed["390x844/scroll_width"] {
		t.Errorf("screenshot is %d px wide, scroll width %v", cfg.Width, r.Observed["390x844/scroll_width"])
	}
	zr, err := zip.OpenReader(filepath.Join(req.OutDir, "trace-wide.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string]string{}
	for _, e := range zr.File {
		// Every entry reads back whole: its checksum and sizes agree with its data.
		rc, err := e.Open()
		var b []byte
		if err == nil {
			b, err = io.ReadAll(rc)
			rc.Close()
		}
		if err != nil {
			t.Errorf("trace entry %s: %v", e.Name, err)
		}
		entries[e.Name] = string(b)
	}
	for _, n := range []string{"390x844-trace.trace", "390x844-trace.network", "1440x1000-trace.trace", "1440x1000-trace.network"} {
		if _, ok := entries[n]; !ok {
			t.Errorf("trace has no %s (entries: %d)", n, len(zr.File))
		}
	}
	for _, vp := range []string{"390x844", "1440x1000"} {
		if !strings.Contains(entries[vp+"-trace.trace"], `"method":"goto"`) {
			t.Errorf("the %s trace does not record the navigation", vp)
		}
		// Screenshots as the page ran, but no DOM snapshots: Playwright takes those with a
		// script in the page's own world, which the page can see.
		if !strings.Contains(entries[vp+"-trace.trace"], `"type":"screencast-frame"`) {
			t.Errorf("the %s trace has no screenshots", vp)
		}
		if strings.Contains(entries[vp+"-trace.trace"], `"type":"frame-snapshot"`) {
			t.Errorf("the %s trace has DOM snapshots", vp)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(req.OutDir, ".trace-*")); len(leftovers) > 0 {
		t.Errorf("per-viewport trace parts left behind: %v", leftovers)
	}
	if ev.Browser.Name != "chromium" || ev.Browser.Mode != ModeLocal || ev.Browser.Version == "" {
		t.Errorf("browser %+v", ev.Browser)
	}
}

// End to end with the policy: the W1 contract against a page that does what it asks is
// satisfied; against W2's "Mobile optimized" header with the table still overflowing it is
// not, naming scrollWidth and innerWidth.
func TestW1WithPolicy(t *testing.T) {
	v := testVerifier(t)
	c, hash := loadW1(t)
	exp := policy.Expectation{
		ContractHash: hash, ImplementationSHA: testSHA,
		VerifierPublicKey: testKey.Public().(ed25519.PublicKey), VerifierDigest: Digest(),
		Build: contracts.BuildResult{Passed: true},
	}

	good := site(t, testSHA, map[string]string{"/watchlist": watchlistGood}, nil)
	ev := verify(t, v, contractRequest(t, c, hash, good.URL))
	if d := policy.Decide(*c, exp, ev); d.Verdict != contracts.Satisfied {
		t.Errorf("W1 page: verdict %s, reasons %+v", d.Verdict, d.Reasons)
	}
	for _, r := range ev.Results {
		t.Logf("W1 %-20s %-4s %5d ms", r.CriterionID, r.Status, r.DurationMS)
	}

	w2 := site(t, testSHA, map[string]string{"/watchlist": watchlistW2}, nil)
	ev = verify(t, v, contractRequest(t, c, hash, w2.URL))
	d := policy.Decide(*c, exp, ev)
	if d.Verdict != contracts.NotSatisfied {
		t.Fatalf("W2 page: verdict %s, reasons %+v", d.Verdict, d.Reasons)
	}
	if failed := d.FailedCriteria(); !slices.Equal(failed, []string{"mobile-no-overflow", "mobile-cards"}) {
		t.Errorf("failed criteria %v", failed)
	}
	if !strings.Contains(d.Reasons[0].Message, "scrollWidth = ") || !strings.Contains(d.Reasons[0].Message, "innerWidth = 390") {
		t.Errorf("first reason %q does not name scrollWidth and innerWidth", d.Reasons[0].Message)
	}
	t.Logf("W2: %s", d.Summary())
}
