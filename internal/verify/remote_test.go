package verify

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/settings"
)

// remoteChromium starts a Chromium with a DevTools endpoint on 127.0.0.1 and a fresh profile,
// and kills it (by its process group id) when the test ends. It returns the http endpoint and
// the browser's ws URL.
func remoteChromium(t *testing.T) (httpURL, wsURL string) {
	t.Helper()
	needBrowser(t)
	profile := t.TempDir()
	// It stands in for a hosted browser, whose host confines it: as root it needs --no-sandbox.
	args := append([]string{"--headless", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--no-sandbox", "--user-data-dir=" + profile}, LaunchArgs...)
	cmd := exec.Command(DefaultConfig().Chromium, append(args, "about:blank")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Killed, it leaves its temporary files behind: they go in the profile the test removes.
	cmd.Env = append(os.Environ(), "TMPDIR="+profile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	// Chromium writes the port it chose, then the browser target's path.
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.Open(filepath.Join(profile, "DevToolsActivePort"))
		if err == nil {
			sc := bufio.NewScanner(f)
			var lines []string
			for sc.Scan() {
				lines = append(lines, strings.TrimSpace(sc.Text()))
			}
			f.Close()
			if len(lines) >= 2 && lines[0] != "" && strings.HasPrefix(lines[1], "/devtools/browser/") {
				return "http://127.0.0.1:" + lines[0], "ws://127.0.0.1:" + lines[0] + lines[1]
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("chromium wrote no DevToolsActivePort within 30 s")
		}
		time.Sleep(50 * time.Millisecond) // polling a file with a deadline, not synchronising
	}
}

func TestCDPSource(t *testing.T) {
	httpURL, wsURL := remoteChromium(t)
	srv := site(t, testSHA, map[string]string{"/watchlist": watchlistGood}, nil)
	for name, ep := range map[string]string{"http": httpURL, "ws": wsURL} {
		t.Run(name, func(t *testing.T) {
			v := testVerifier(t)
			v.Source = CDP{Endpoint: ep}
			c := crit("cards", "/watchlist", contracts.Assertion{Kind: contracts.KindVisibleText,
				Texts: []string{"NVDA"}, Within: `[data-testid="watchlist-card"]`})
			c.Seed = &contracts.Seed{LocalStorage: map[string]json.RawMessage{"watchlist": json.RawMessage(`["NVDA"]`)}}
			req := request(t, srv.URL, c)
			req.EvidencePolicy.Required = append(req.EvidencePolicy.Required, contracts.ArtifactTrace)
			ev := verify(t, v, req)
			wantStatus(t, ev, "cards", contracts.StatusPass)
			if ev.Browser.Mode != ModeCDP || ev.Browser.Version == "" {
				t.Errorf("browser %+v", ev.Browser)
			}
			if r := result(t, ev, "cards"); len(r.Artifacts) != 2 {
				t.Errorf("artifacts over CDP: %v", r.Artifacts)
			}
		})
	}
}

// fakeBrowserbase checks every request against Browserbase's documented API
// (docs.browserbase.com/reference/api/create-a-session: POST /v1/sessions with X-BB-API-Key and
// {"projectId"}, answering {"id", "connectUrl", ...}; .../update-a-session: POST
// /v1/sessions/{id} with {"projectId", "status": "REQUEST_RELEASE"}).
type fakeBrowserbase struct {
	t          *testing.T
	connectURL string
	status     int // for create; 0 = 200

	mu       sync.Mutex
	created  int
	released []string
}

func (f *fakeBrowserbase) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	if r.Method != http.MethodPost {
		t.Errorf("method %s, want POST", r.Method)
	}
	if got := r.Header.Get("X-BB-API-Key"); got != "bb_live_test" {
		t.Errorf("X-BB-API-Key %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("body %q is not JSON", raw)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/v1/sessions":
		if len(body) != 2 || body["projectId"] != "proj_1" || body["timeout"] != 300.0 {
			t.Errorf("create body %s", raw)
		}
		if f.status != 0 {
			w.WriteHeader(f.status)
			io.WriteString(w, `{"error":"Unauthorized"}`)
			return
		}
		f.created++
		json.NewEncoder(w).Encode(map[string]any{
			"id": "sess_1", "status": "RUNNING", "projectId": "proj_1", "connectUrl": f.connectURL,
			"createdAt": "2026-11-29T00:00:00Z", "region": "us-west-2",
		})
	case r.URL.Path == "/v1/sessions/sess_1":
		if len(body) != 2 || body["projectId"] != "proj_1" || body["status"] != "REQUEST_RELEASE" {
			t.Errorf("release body %s", raw)
		}
		f.released = append(f.released, "sess_1")
		io.WriteString(w, `{"id":"sess_1","status":"COMPLETED"}`)
	default:
		t.Errorf("unexpected path %s", r.URL.Path)
		http.NotFound(w, r)
	}
}

func TestBrowserbaseSource(t *testing.T) {
	_, wsURL := remoteChromium(t)
	fake := &fakeBrowserbase{t: t, connectURL: wsURL}
	api := httptest.NewServer(fake)
	defer api.Close()
	srv := site(t, testSHA, map[string]string{"/": page(``, `<main>hello</main>`)}, nil)

	b := settings.Browser{BrowserbaseAPIKey: "bb_live_test", BrowserbaseProjectID: "proj_1", BrowserbaseURL: api.URL}
	src, ok := SourceFor(Config{}, b).(*Browserbase)
	if !ok {
		t.Fatal("SourceFor did not pick Browserbase with its key and project set")
	}
	src.TimeoutSeconds = 300
	v := testVerifier(t)
	v.Source = src
	ev := verify(t, v, request(t, srv.URL, crit("hello", "/", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"hello"}})))
	wantStatus(t, ev, "hello", contracts.StatusPass)
	if ev.Browser.RecordingURL != "https://browserbase.com/sessions/sess_1" || ev.Browser.Mode != ModeCDP {
		t.Errorf("browser %+v", ev.Browser)
	}
	fake.mu.Lock()
	if fake.created != 1 || len(fake.released) != 1 {
		t.Errorf("created %d sessions, released %v", fake.created, fake.released)
	}
	fake.mu.Unlock()
}

// The REST client alone (no browser, so it also runs in -short mode).
func TestBrowserbaseClient(t *testing.T) {
	fake := &fakeBrowserbase{t: t, connectURL: "wss://connect.example.invalid/?signingKey=secret"}
	api := httptest.NewServer(fake)
	defer api.Close()
	bb := &Browserbase{APIKey: "bb_live_test", ProjectID: "proj_1", BaseURL: api.URL, TimeoutSeconds: 300}
	s, err := bb.CreateSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "sess_1" || s.ConnectURL != fake.connectURL || s.RecordingURL() != "https://browserbase.com/sessions/sess_1" {
		t.Errorf("session %+v", s)
	}
	if err := bb.ReleaseSession(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if len(fake.released) != 1 {
		t.Errorf("released %v", fake.released)
	}

	// A refused key is a clear error that does not repeat the key.
	fake.status = http.StatusUnauthorized
	_, err = bb.CreateSession(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "bb_live_test") {
		t.Errorf("401: %v", err)
	}
	// A session without a usable connect URL is refused before any connection attempt.
	fake.status = 0
	fake.connectURL = "http://not-a-websocket"
	if _, err := bb.CreateSession(context.Background()); err == nil || !strings.Contains(err.Error(), "connectUrl") {
		t.Errorf("bad connectUrl: %v", err)
	}
	if _, err := (&Browserbase{}).CreateSession(context.Background()); err == nil {
		t.Error("no key, no project: want an error")
	}
}

func TestSourceFor(t *testing.T) {
	env := map[string]string{}
	get := func() settings.Browser {
		s, err := settings.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return s.Browser
	}
	if _, ok := SourceFor(Config{}, get()).(Local); !ok {
		t.Error("no settings: want Local")
	}
	env["BROWSERBASE_API_KEY"] = "k" // a key without a project is not enough
	env["SIGNOFF_CDP_URL"] = "http://127.0.0.1:9222"
	if s, ok := SourceFor(Config{}, get()).(CDP); !ok || s.Endpoint != "http://127.0.0.1:9222" {
		t.Errorf("cdp: %#v", SourceFor(Config{}, get()))
	}
	env["BROWSERBASE_PROJECT_ID"] = "p"
	if _, ok := SourceFor(Config{}, get()).(*Browserbase); !ok {
		t.Error("key and project: want Browserbase")
	}
}
