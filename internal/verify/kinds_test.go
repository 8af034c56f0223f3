package verify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
)

// Every assertion kind, one criterion that must pass and one that must fail, in one run.
func TestAssertionKinds(t *testing.T) {
	v := testVerifier(t)
	cards := `<div data-testid="card"><strong>NVDA</strong> Nvidia</div><div data-testid="card">AA<b>PL</b> Apple</div>`
	pages := map[string]string{
		"/ok": page(``, `<main><h1 id="title">Watchlist</h1>`+cards+
			`<p style="display:none">HIDDENTEXT</p><p style="visibility:hidden">INVISIBLE</p><p style="opacity:0">FADED</p>`+
			`<span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)">SRONLY</span>`+
			`<p>Outside cards: MSFT</p><div id="low" style="position:absolute;top:1200px">Below the fold</div>`+
			`<div id="gone" style="display:none">gone</div><ul><li>a</li><li>b</li><li>c</li></ul></main>`),
		"/console": page(`<script>console.error("boom from the app")</script>`, `<main>console</main>`),
		"/throws":  page(`<script>setTimeout(() => { throw new Error("uncaught from the app") }, 50)</script>`, `<main>throws</main>`),
		"/rejects": page(`<script>Promise.reject(new Error("unhandled rejection from the app"))</script>`, `<main>rejects</main>`),
	}
	extra := map[string]http.HandlerFunc{
		"/broken": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, page(``, `<main>Internal error</main>`))
		},
	}
	srv := site(t, testSHA, pages, extra)
	lit := func(s string) json.RawMessage { return json.RawMessage(s) }
	A := func(kind string) contracts.Assertion { return contracts.Assertion{Kind: kind} }
	cases := []tc{
		{crit("loads-ok", "/ok", A(contracts.KindLoads)), contracts.StatusPass},
		{crit("loads-500", "/broken", A(contracts.KindLoads)), contracts.StatusFail},
		{crit("loads-page-error", "/throws", A(contracts.KindLoads)), contracts.StatusFail},

		{crit("text-ok", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Watchlist", "NVDA", "AAPL"}}), contracts.StatusPass},
		{crit("text-within-ok", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"NVDA", "AAPL"}, Within: `[data-testid="card"]`}), contracts.StatusPass},
		{crit("text-within-fail", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"NVDA", "MSFT"}, Within: `[data-testid="card"]`}), contracts.StatusFail},
		{crit("text-hidden-fail", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"HIDDENTEXT"}}), contracts.StatusFail},
		{crit("text-invisible-fail", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"INVISIBLE"}}), contracts.StatusFail},
		{crit("text-faded-fail", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"FADED"}}), contracts.StatusFail},
		{crit("text-sronly-fail", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"SRONLY"}}), contracts.StatusFail},
		{crit("text-absent-fail", "/ok", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"TSLA"}}), contracts.StatusFail},

		{crit("present-ok", "/ok", contracts.Assertion{Kind: contracts.KindElementPresent, Selector: `[data-testid="card"]`}), contracts.StatusPass},
		{crit("present-hidden-fail", "/ok", contracts.Assertion{Kind: contracts.KindElementPresent, Selector: "#gone"}), contracts.StatusFail},
		{crit("present-attached-ok", "/ok", contracts.Assertion{Kind: contracts.KindElementPresent, Selector: "#gone", State: contracts.StateAttached}), contracts.StatusPass},
		{crit("absent-ok", "/ok", contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: "#gone"}), contracts.StatusPass},
		{crit("absent-attached-fail", "/ok", contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: "#gone", State: contracts.StateAttached}), contracts.StatusFail},
		{crit("absent-fail", "/ok", contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: "#title"}), contracts.StatusFail},

		{crit("in-viewport-ok", "/ok", contracts.Assertion{Kind: contracts.KindInViewport, Selector: "#title"}), contracts.StatusPass},
		{crit("in-viewport-fail", "/ok", contracts.Assertion{Kind: contracts.KindInViewport, Selector: "#low"}), contracts.StatusFail},
		{crit("in-viewport-missing-fail", "/ok", contracts.Assertion{Kind: contracts.KindInViewport, Selector: "#nope"}), contracts.StatusFail},

		// Chromium's own favicon 404 is not the app's console error.
		{crit("console-ok", "/ok", A(contracts.KindNoConsoleErrors)), contracts.StatusPass},
		{crit("console-fail", "/console", A(contracts.KindNoConsoleErrors)), contracts.StatusFail},
		{crit("page-errors-ok", "/ok", A(contracts.KindNoPageErrors)), contracts.StatusPass},
		{crit("page-errors-throw", "/throws", A(contracts.KindNoPageErrors)), contracts.StatusFail},
		{crit("page-errors-reject", "/rejects", A(contracts.KindNoPageErrors)), contracts.StatusFail},

		{crit("measure-ok", "/ok", contracts.Assertion{Kind: contracts.KindMeasure, Expression: "document.querySelectorAll('li').length", Operator: contracts.OpGE, Expected: lit("3")}), contracts.StatusPass},
		{crit("measure-fail", "/ok", contracts.Assertion{Kind: contracts.KindMeasure, Expression: "document.querySelectorAll('li').length", Operator: contracts.OpGT, Expected: lit("3")}), contracts.StatusFail},
		{crit("measure-from-ok", "/ok", contracts.Assertion{Kind: contracts.KindMeasure, Expression: "document.documentElement.clientWidth", Operator: contracts.OpEQ, ExpectedFrom: "window.innerWidth"}), contracts.StatusPass},
		{crit("measure-contains-ok", "/ok", contracts.Assertion{Kind: contracts.KindMeasure, Expression: "document.title + ' ' + document.querySelector('h1').textContent", Operator: contracts.OpContains, Expected: lit(`"Watchlist"`)}), contracts.StatusPass},
		{crit("measure-throws-error", "/ok", contracts.Assertion{Kind: contracts.KindMeasure, Expression: "document.querySelector('#nope').textContent", Operator: contracts.OpEQ, Expected: lit(`"x"`)}), contracts.StatusError},

		{crit("all-of-ok", "/ok", contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{
			{Kind: contracts.KindElementAbsent, Selector: "table"},
			{Kind: contracts.KindVisibleText, Texts: []string{"NVDA"}, Within: `[data-testid="card"]`},
		}}), contracts.StatusPass},
		{crit("all-of-fail", "/ok", contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{
			{Kind: contracts.KindElementAbsent, Selector: "#title"},
			{Kind: contracts.KindVisibleText, Texts: []string{"NVDA"}},
		}}), contracts.StatusFail},
	}
	ev := verifyCases(t, v, srv.URL, cases)

	// The observed values are the ones ChecksFor names, and say what happened.
	obs := func(id, key string) any { return result(t, ev, id).Observed["390x844/"+key] }
	checks := []struct {
		id, key string
		want    any
	}{
		{"loads-500", "status", 500.0},
		{"loads-ok", "status", 200.0},
		{"loads-page-error", "page_errors", 1.0},
		{"text-within-fail", "text.0.visible", true},
		{"text-within-fail", "text.1.visible", false},
		{"present-ok", "count", 2.0},
		{"present-attached-ok", "count", 1.0},
		{"in-viewport-fail", "count", 1.0},
		{"in-viewport-missing-fail", "count", 0.0},
		{"console-fail", "console_errors", 1.0},
		{"console-ok", "console_errors", 0.0},
		{"measure-ok", "value", 3.0},
		{"measure-from-ok", "expected_value", 390.0},
		{"all-of-fail", "0.count", 1.0},
		{"all-of-fail", "1.text.0.visible", true},
	}
	for _, c := range checks {
		if got := obs(c.id, c.key); got != c.want {
			t.Errorf("%s: observed %s = %v, want %v", c.id, c.key, got, c.want)
		}
	}
	if top, _ := obs("in-viewport-fail", "top").(float64); top < 844 {
		t.Errorf("in-viewport-fail: top %v, want below the 844 px fold", top)
	}
	if errs := result(t, ev, "console-fail").ConsoleErrors; len(errs) != 1 || !strings.Contains(errs[0], "boom from the app") {
		t.Errorf("console errors %q, want the app's one", errs)
	}
	if errs := result(t, ev, "page-errors-reject").PageErrors; len(errs) != 1 || !strings.Contains(errs[0], "unhandled rejection") {
		t.Errorf("page errors %q, want the rejection", errs)
	}
	if r := result(t, ev, "measure-throws-error"); !strings.Contains(r.Error, "measure") {
		t.Errorf("measure error %q does not say what failed", r.Error)
	}
}

// Actions run in order before the assertion; localStorage is seeded once, before the app's
// scripts, and not clobbered on later navigations.
func TestActionsAndSeed(t *testing.T) {
	v := testVerifier(t)
	pages := map[string]string{
		"/visits": page(``, `<main id="m"></main><script>
			const n = Number(localStorage.getItem('visits') || 0) + 1;
			localStorage.setItem('visits', String(n));
			const w = JSON.parse(localStorage.getItem('watchlist') || '[]');
			document.getElementById('m').textContent = 'visits ' + n + ' symbols ' + w.join(',') + ' theme ' + localStorage.getItem('theme');
		</script>`),
		"/form": page(``, `<main><input id="q"><button id="go" onclick="document.getElementById('out').textContent='searched '+document.getElementById('q').value">Go</button>`+
			`<p id="out"></p><button id="late-btn" style="display:none">late</button></main><script>
			setTimeout(() => { document.getElementById('late-btn').style.display = 'inline'; document.getElementById('out2').textContent = 'arrived'; }, 400);
		</script><p id="out2"></p>`),
		// The page navigates itself after load, while the verifier waits for it to settle.
		"/redirect":   page(``, `<main>redirecting</main><script>setTimeout(() => location.replace('/redirected'), 250)</script>`),
		"/redirected": page(``, `<main>arrived after a client-side redirect</main>`),
		"/async": page(``, `<main id="m">Loading quotes…</main><script>
			fetch('/api/quotes').then(r => r.json()).then(q => { document.getElementById('m').textContent = 'NVDA ' + q.NVDA; });
		</script>`),
	}
	extra := map[string]http.HandlerFunc{
		"/api/quotes": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"NVDA": 123.5}`)
		},
	}
	srv := site(t, testSHA, pages, extra)
	seed := &contracts.Seed{LocalStorage: map[string]json.RawMessage{
		"visits":    json.RawMessage(`5`),
		"watchlist": json.RawMessage(`["NVDA", "AAPL"]`),
		"theme":     json.RawMessage(`"dark"`),
	}}
	reload := crit("seed-kept", "/visits", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"visits 7 symbols NVDA,AAPL theme dark"}})
	reload.Seed = seed
	reload.Actions = []contracts.Action{{Type: contracts.ActionGoto, Route: "/visits"}}

	form := crit("click-fill", "/form", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"searched NVDA"}})
	form.Actions = []contracts.Action{
		{Type: contracts.ActionFill, Selector: "#q", Value: "NVDA"},
		{Type: contracts.ActionClick, Selector: "#go"},
	}
	wait := crit("wait-for", "/form", contracts.Assertion{Kind: contracts.KindElementPresent, Selector: "#late-btn"})
	wait.Actions = []contracts.Action{{Type: contracts.ActionWaitFor, Selector: "#late-btn", TimeoutMS: 5000}}

	// A slow API: the check reads the loading state while the data is held back.
	loading := crit("delay-loading", "/async", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Loading quotes"}})
	loading.Actions = []contracts.Action{{Type: contracts.ActionDelayRoute, Route: "/api/quotes", DelayMS: 4000}}
	loaded := crit("no-delay-loaded", "/async", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"NVDA 123.5"}})

	missing := crit("click-missing", "/form", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"searched"}})
	missing.Actions = []contracts.Action{{Type: contracts.ActionClick, Selector: "#no-such-button", TimeoutMS: 500}}
	timeout := crit("wait-timeout", "/form", contracts.Assertion{Kind: contracts.KindElementPresent, Selector: "#never"})
	timeout.Actions = []contracts.Action{{Type: contracts.ActionWaitFor, Selector: "#never"}}
	timeout.MaxRuntimeMS = 1500

	redirect := crit("self-navigation", "/redirect", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"arrived after a client-side redirect"}})

	start := time.Now()
	ev := verify(t, v, request(t, srv.URL, reload, form, wait, loading, loaded, missing, timeout, redirect))
	wantStatus(t, ev, "self-navigation", contracts.StatusPass)
	wantStatus(t, ev, "seed-kept", contracts.StatusPass)
	wantStatus(t, ev, "click-fill", contracts.StatusPass)
	wantStatus(t, ev, "wait-for", contracts.StatusPass)
	wantStatus(t, ev, "delay-loading", contracts.StatusPass)
	wantStatus(t, ev, "no-delay-loaded", contracts.StatusPass)
	if r := wantStatus(t, ev, "click-missing", contracts.StatusError); !strings.Contains(r.Error, "action 1 (click #no-such-button)") {
		t.Errorf("click-missing error %q does not name the action", r.Error)
	}
	// Only a hang fails this: the real budget is 1500 ms times the factor and the host's load
	// stretch at most, plus the screenshot after it.
	ceiling := int64(1500*DefaultRealTimeFactor*maxLoadStretch) + artifactTimeout.Milliseconds()
	if r := wantStatus(t, ev, "wait-timeout", contracts.StatusTimeout); r.DurationMS > ceiling {
		t.Errorf("wait-timeout took %d ms, past the most its 1500 ms budget can stretch to (%d ms)", r.DurationMS, ceiling)
	}
	t.Logf("8 criteria in %v", time.Since(start))
}

// http criteria use no browser: status and RFC 6901 pointers into the JSON body.
func TestHTTPCriterion(t *testing.T) {
	v := &Verifier{Config: DefaultConfig(), Key: testKey} // no driver, no browser needed
	srv := site(t, testSHA, nil, map[string]http.HandlerFunc{
		"/api/health": func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				http.Error(w, "method", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"status":"ok","count":4,"symbols":["NVDA","AAPL"],"a/b":{"m~n":true}}`)
		},
		"/api/text": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "not json") },
		"/elsewhere": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.invalid/x", http.StatusFound)
		},
	})
	lit := func(s string) json.RawMessage { return json.RawMessage(s) }
	h := func(id, route string, status int, checks ...contracts.JSONCheck) contracts.Criterion {
		return contracts.Criterion{ID: id, Description: id, Route: route, MaxRuntimeMS: 5000,
			RequiredArtifacts: []string{contracts.ArtifactObserved},
			Assert:            contracts.Assertion{Kind: contracts.KindHTTP, Method: "GET", Status: status, JSON: checks}}
	}
	ok := h("health", "/api/health", 200,
		contracts.JSONCheck{Pointer: "/status", Operator: contracts.OpEQ, Expected: lit(`"ok"`)},
		contracts.JSONCheck{Pointer: "/count", Operator: contracts.OpGE, Expected: lit(`4`)},
		contracts.JSONCheck{Pointer: "/symbols", Operator: contracts.OpContains, Expected: lit(`"NVDA"`)},
		contracts.JSONCheck{Pointer: "/symbols/1", Operator: contracts.OpEQ, Expected: lit(`"AAPL"`)},
		contracts.JSONCheck{Pointer: "/a~1b/m~0n", Operator: contracts.OpEQ, Expected: lit(`true`)})
	wrong := h("health-wrong", "/api/health", 200,
		contracts.JSONCheck{Pointer: "/count", Operator: contracts.OpGT, Expected: lit(`4`)})
	status := h("status-wrong", "/api/missing", 200)
	missingPtr := h("pointer-missing", "/api/health", 200,
		contracts.JSONCheck{Pointer: "/nope", Operator: contracts.OpEQ, Expected: lit(`1`)})
	notJSON := h("not-json", "/api/text", 200,
		contracts.JSONCheck{Pointer: "/x", Operator: contracts.OpEQ, Expected: lit(`1`)})
	redirect := h("no-leaving", "/elsewhere", 302)

	req := request(t, srv.URL, ok, wrong, status, missingPtr, notJSON, redirect)
	ev := verify(t, v, req)
	if ev.Browser.Mode != ModeHTTP {
		t.Errorf("browser mode %q, want %q for http-only criteria", ev.Browser.Mode, ModeHTTP)
	}
	wantStatus(t, ev, "health", contracts.StatusPass)
	wantStatus(t, ev, "health-wrong", contracts.StatusFail)
	if r := wantStatus(t, ev, "status-wrong", contracts.StatusFail); r.Observed["status"] != 404.0 {
		t.Errorf("status-wrong observed %v", r.Observed)
	}
	// A member the response lacks, or a body that is not JSON, is measured and fails: it is
	// what the implementation did not deliver (signoff.assertions/2), and says why.
	if r := wantStatus(t, ev, "pointer-missing", contracts.StatusFail); r.Observed["json.0.value"] != nil ||
		!strings.Contains(fmt.Sprint(r.Observed[contracts.JSONMissingKey(0)]), `no member "nope"`) {
		t.Errorf("pointer-missing observed %v", r.Observed)
	}
	if r := wantStatus(t, ev, "not-json", contracts.StatusFail); !strings.Contains(fmt.Sprint(r.Observed[contracts.ObsJSONError]), "not JSON") {
		t.Errorf("not-json observed %v", r.Observed)
	}
	if r := wantStatus(t, ev, "no-leaving", contracts.StatusPass); r.Observed["status"] != 302.0 {
		t.Errorf("the redirect to another host was followed: %v", r.Observed)
	}
}

func TestJSONPointer(t *testing.T) {
	// The examples of RFC 6901 section 5.
	var doc any
	if err := json.Unmarshal([]byte(`{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4,
		"i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8}`), &doc); err != nil {
		t.Fatal(err)
	}
	cases := map[string]any{
		"/foo/0": "bar", "/": 0.0, "/a~1b": 1.0, "/c%d": 2.0, "/e^f": 3.0, "/g|h": 4.0,
		`/i\j`: 5.0, `/k"l`: 6.0, "/ ": 7.0, "/m~0n": 8.0,
	}
	for p, want := range cases {
		got, err := JSONPointer(doc, p)
		if err != nil || got != want {
			t.Errorf("%q: got %v, %v; want %v", p, got, err, want)
		}
	}
	if got, err := JSONPointer(doc, ""); err != nil || got == nil {
		t.Errorf(`"" must be the whole document, got %v %v`, got, err)
	}
	if got, _ := JSONPointer(doc, "/foo"); len(got.([]any)) != 2 {
		t.Errorf("/foo: %v", got)
	}
	for _, bad := range []string{"foo", "/foo/2", "/foo/01", "/foo/-", "/foo/x", "/nope", "/m~2n", "/foo/0/x"} {
		if v, err := JSONPointer(doc, bad); err == nil {
			t.Errorf("%q resolved to %v, want an error", bad, v)
		}
	}
}

// tc is a criterion and the status it must get.
type tc struct {
	c    contracts.Criterion
	want string
}

// verifyCases verifies every case's criterion in one run and checks each status.
func verifyCases(t *testing.T, v *Verifier, url string, cases []tc) *contracts.Evidence {
	t.Helper()
	var criteria []contracts.Criterion
	for _, c := range cases {
		criteria = append(criteria, c.c)
	}
	ev := verify(t, v, request(t, url, criteria...))
	for _, c := range cases {
		wantStatus(t, ev, c.c.ID, c.want)
	}
	return ev
}

// TestSeedIsWrittenFromThePageItself: a seeded page is seeded as its first document starts,
// without the app's server being asked for anything but the route, with an unseeded page's
// history, and with nothing the page's own scripts can call. A document that denies itself
// storage (a CSP sandbox) is measured as it is, not waited on.
func TestSeedIsWrittenFromThePageItself(t *testing.T) {
	v := testVerifier(t)
	var mu sync.Mutex
	var asked []string
	show := page(``, `<main id="m"></main><script>
		document.getElementById('m').textContent = 'history ' + history.length + ' theme ' + localStorage.getItem('theme') +
			' report ' + typeof window.signoffSeeded;
	</script>`)
	sandboxed := page(``, `<main id="m"></main><script>
		let got;
		try { got = localStorage.getItem('theme'); } catch (e) { got = e.name; }
		document.getElementById('m').textContent = 'storage ' + got;
	</script>`)
	srv := site(t, testSHA, nil, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked = append(asked, r.URL.Path)
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch r.URL.Path {
			case "/show":
				fmt.Fprint(w, show)
			case "/sandboxed":
				w.Header().Set("Content-Security-Policy", "sandbox allow-scripts")
				fmt.Fprint(w, sandboxed)
			default:
				http.NotFound(w, r)
			}
		},
	})
	theme := &contracts.Seed{LocalStorage: map[string]json.RawMessage{"theme": json.RawMessage(`"dark"`)}}
	seeded := crit("seeded", "/show", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"history 2 theme dark report undefined"}})
	seeded.Seed = theme
	unseeded := crit("unseeded", "/show", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"history 2 theme null report undefined"}})
	denied := crit("denied", "/sandboxed", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"storage SecurityError"}})
	denied.Seed = theme
	ev := verify(t, v, request(t, srv.URL, seeded, unseeded, denied))
	wantStatus(t, ev, "seeded", contracts.StatusPass)
	wantStatus(t, ev, "unseeded", contracts.StatusPass)
	wantStatus(t, ev, "denied", contracts.StatusPass)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range asked {
		if p != "/show" && p != "/sandboxed" {
			t.Errorf("the app's server was asked for %s; only the routes are the app's to serve", p)
		}
	}
}
