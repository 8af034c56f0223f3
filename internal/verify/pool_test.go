package verify

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// countingSource launches real Chromium and remembers every browser it opened.
type countingSource struct {
	src BrowserSource

	mu     sync.Mutex
	opened []playwright.Browser
}

func (c *countingSource) Open(ctx context.Context, pw *playwright.Playwright) (*BrowserSession, error) {
	sess, err := c.src.Open(ctx, pw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.opened = append(c.opened, sess.Browser)
	c.mu.Unlock()
	return sess, nil
}

func (c *countingSource) browsers() []playwright.Browser {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]playwright.Browser(nil), c.opened...)
}

// Four base checks of one preview at once measure it in one browser, each in contexts of its
// own with evidence of its own; the browser closes when the last lets go. An attempt, and a
// base check of another commit, get browsers of their own.
func TestBaseChecksShareOneBrowser(t *testing.T) {
	needBrowser(t)
	const runs = 4
	// Each run loads a route of its own, and no route answers until all four have been
	// asked for: every run holds the browser while the others open theirs.
	all := make(chan struct{})
	var mu sync.Mutex
	asked := map[string]bool{}
	srv := site(t, testSHA, nil, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		asked[r.URL.Path] = true
		if len(asked) == runs {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(page("", "<h1>Shared</h1>")))
	}})

	src := &countingSource{src: DefaultConfig().local()}
	pool := &Pool{}
	v := testVerifier(t)
	v.Source, v.BaseBrowsers = src, pool
	base := func(id string) Request {
		req := request(t, srv.URL, crit("heading", "/"+id, contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Shared"}}))
		req.Attempt, req.ContractID = 0, id
		return req
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	evs := make([]*contracts.Evidence, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			evs[i], errs[i] = v.Verify(ctx, base(string(rune('a'+i))))
		}()
	}
	wg.Wait()
	for i := range runs {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		wantStatus(t, evs[i], "heading", contracts.StatusPass)
		if evs[i].ContractID != string(rune('a'+i)) || evs[i].VerifySignature(testKey.Public().(ed25519.PublicKey)) != nil {
			t.Errorf("run %d: evidence for %q, or not signed by the verifier", i, evs[i].ContractID)
		}
	}
	opened := src.browsers()
	if len(opened) != 1 || pool.openedCount() != 1 {
		t.Fatalf("%d base checks of one preview opened %d browsers (pool says %d), want 1", runs, len(opened), pool.openedCount())
	}
	if pool.heldCount() != 0 || opened[0].IsConnected() {
		t.Errorf("after the last run let go: pool holds %d, browser connected %v; want it closed", pool.heldCount(), opened[0].IsConnected())
	}

	// An attempt runs the executor's code: it never shares.
	req := base("attempt")
	req.Attempt = 1
	verify(t, v, req)
	if got := len(src.browsers()); got != 2 || pool.openedCount() != 1 {
		t.Errorf("an attempt: %d browsers opened in all, pool %d; want 2 and 1 (the attempt its own)", got, pool.openedCount())
	}
}

// A lingering browser is taken by the next run, one that went away is replaced, and Close
// closes what no run holds.
func TestBrowserPoolLingersAndReplaces(t *testing.T) {
	needBrowser(t)
	src := &countingSource{src: DefaultConfig().local()}
	pool := &Pool{Linger: time.Hour}
	ctx := context.Background()
	pw := testDriver.Playwright()

	a, err := pool.Open(ctx, pw, "k", src)
	if err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	_ = a.Close() // letting go twice counts once
	if pool.heldCount() != 1 || !a.Browser.IsConnected() {
		t.Fatalf("within the linger: pool holds %d, connected %v; want the browser kept", pool.heldCount(), a.Browser.IsConnected())
	}
	b, err := pool.Open(ctx, pw, "k", src)
	if err != nil {
		t.Fatal(err)
	}
	if b.Browser != a.Browser || pool.openedCount() != 1 {
		t.Fatalf("the next run got another browser (opened %d)", pool.openedCount())
	}
	// The browser dies under a run: the next run gets a new one.
	if err := a.Browser.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := pool.Open(ctx, pw, "k", src)
	if err != nil {
		t.Fatal(err)
	}
	if c.Browser == a.Browser || !c.Browser.IsConnected() || pool.openedCount() != 2 {
		t.Fatalf("after the browser went away: same %v, connected %v, opened %d; want a new one", c.Browser == a.Browser, c.Browser.IsConnected(), pool.openedCount())
	}
	// Another preview (or commit) is another browser, even while this one is held.
	d, err := pool.Open(ctx, pw, "k2", src)
	if err != nil {
		t.Fatal(err)
	}
	if d.Browser == c.Browser || pool.openedCount() != 3 {
		t.Fatalf("another key got the same browser (opened %d)", pool.openedCount())
	}
	_ = b.Close()
	_ = c.Close()
	_ = d.Close()
	pool.Close()
	if pool.heldCount() != 0 || c.Browser.IsConnected() || d.Browser.IsConnected() {
		t.Errorf("after Close: pool holds %d, connected %v %v; want nothing", pool.heldCount(), c.Browser.IsConnected(), d.Browser.IsConnected())
	}
}

type failingSource struct{ err error }

func (f failingSource) Open(context.Context, *playwright.Playwright) (*BrowserSession, error) {
	return nil, f.err
}

// A browser that cannot be opened fails the run with the source's error and leaves nothing
// in the pool.
func TestBrowserPoolOpenFailure(t *testing.T) {
	want := &SetupError{Missing: "Chromium at /nowhere"}
	pool := &Pool{Linger: time.Hour}
	_, err := pool.Open(context.Background(), nil, "k", failingSource{want})
	if !errors.Is(err, want) || pool.heldCount() != 0 {
		t.Fatalf("Open: %v, pool holds %d; want the source's error and nothing held", err, pool.heldCount())
	}
}

// A page in one base check cannot leave anything for the next check's page in the shared
// browser: storage and cookies the first wrote are not there for the second, which sees the
// page as a first visitor does.
func TestSharedBrowserKeepsRunsApart(t *testing.T) {
	needBrowser(t)
	srv := site(t, testSHA, map[string]string{"/": page("", `<h1 id="h">checking</h1><script>
const seen = localStorage.getItem("planted") || sessionStorage.getItem("planted") || document.cookie.includes("planted=");
localStorage.setItem("planted", "1"); sessionStorage.setItem("planted", "1");
document.cookie = "planted=1; max-age=3600; path=/";
document.getElementById("h").textContent = seen ? "left by another run" : "first visit";
</script>`)}, nil)
	src := &countingSource{src: DefaultConfig().local()}
	pool := &Pool{Linger: time.Hour}
	t.Cleanup(pool.Close)
	v := testVerifier(t)
	v.Source, v.BaseBrowsers = src, pool
	for _, id := range []string{"first", "second"} {
		req := request(t, srv.URL, crit("fresh", "/", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"first visit"}}))
		req.Attempt, req.ContractID = 0, id
		wantStatus(t, verify(t, v, req), "fresh", contracts.StatusPass)
	}
	if n := len(src.browsers()); n != 1 {
		t.Fatalf("the two checks ran in %d browsers, want the one shared", n)
	}
}
