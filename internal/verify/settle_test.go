package verify

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
)

// recordLog keeps every message of a logger.
type recordLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *recordLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *recordLog) WithGroup(string) slog.Handler      { return l }

// TestSlowFetchesKeepFrames: a page that polls an API answering in 2 s of real time, and
// shows each answer, is measured on its first page. Its virtual clock waits on every fetch and
// so falls behind the wall clock, where Chromium gave the page no frame: every screenshot
// after a change went unanswered, on the page measured again as well.
func TestSlowFetchesKeepFrames(t *testing.T) {
	v := testVerifier(t)
	rec := &recordLog{}
	v.Logger = slog.New(rec)
	srv := site(t, testSHA, map[string]string{
		"/prices": page(``, `<main><h1>Prices</h1><p id="nvda">NVDA 912.40</p></main><script>
			let n = 0;
			const poll = () => fetch('/api/price').then((r) => r.json()).then((j) => {
				document.getElementById('nvda').textContent = 'NVDA ' + j.price + ' #' + (++n); });
			poll(); setInterval(poll, 1000);</script>`),
	}, map[string]http.HandlerFunc{
		"/api/price": func(w http.ResponseWriter, r *http.Request) {
			select { // the app's slow backend
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"price": "913.05"}`)
		},
	})
	c := crit("slow-prices", "/prices", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Prices", "NVDA 913.05"}}, desktop)
	c.MaxRuntimeMS = 10000
	ev := verify(t, v, request(t, srv.URL, c))
	wantStatus(t, ev, "slow-prices", contracts.StatusPass)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range rec.msgs {
		if strings.Contains(m, "no frame") {
			t.Errorf("the page was measured again: %q", m)
		}
	}
}

// TestWallClockShortBudget: a page that polls its server is measured again on the wall clock,
// where it settles, is touched and watched after the pass in real time. With a short budget,
// that still fits its real budget (wallMargin): the correct page passes.
func TestWallClockShortBudget(t *testing.T) {
	v := testVerifier(t)
	rec := &recordLog{}
	v.Logger = slog.New(rec)
	srv := site(t, testSHA, map[string]string{
		"/prices": page(``, `<main><h1>Prices</h1><p id="nvda">NVDA 912.40</p></main><script>
			const poll = () => fetch('/api/price').then((r) => r.json()).then((j) => {
				document.getElementById('nvda').textContent = 'NVDA ' + j.price; });
			poll(); setInterval(poll, 200);</script>`),
	}, map[string]http.HandlerFunc{
		"/api/price": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"price": "913.05"}`)
		},
	})
	c := crit("short-prices", "/prices", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Prices", "NVDA 913.05"}}, mobile)
	c.MaxRuntimeMS = 3000 // its polls from 1 s of page time on are early
	ev := verify(t, v, request(t, srv.URL, c))
	wantStatus(t, ev, "short-prices", contracts.StatusPass)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.ContainsFunc(rec.msgs, func(m string) bool { return strings.Contains(m, "on the wall clock") }) {
		t.Errorf("the page was not measured on the wall clock: %q", rec.msgs)
	}
}

// TestScriptThatWaitsOnTheClock: on the virtual clock no time passes inside one task of the
// page's script, so a page that busy-waits 30 ms on Date.now (nothing on a person's phone)
// never left its loop, and the verifier waited for the page's answers forever. Such a page is
// measured again on the wall clock and passes; a page whose loop never ends times out, saying
// so, within its real budget.
func TestScriptThatWaitsOnTheClock(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"busy wait", `setInterval(() => { const s = Date.now(); while (Date.now() - s < 30) {} }, 1000);`, contracts.StatusPass},
		{"endless loop", `setTimeout(() => { for (;;) {} }, 500);`, contracts.StatusTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // both mostly wait
			v := testVerifier(t)
			v.Config.frameWait = 3 * time.Second // a stuck page gives no frame either
			rec := &recordLog{}
			v.Logger = slog.New(rec)
			srv := site(t, testSHA, map[string]string{
				"/prices": page(``, `<main><h1>Prices</h1></main><script>`+tc.script+`</script>`),
			}, nil)
			c := crit("busy", "/prices", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Prices"}}, mobile)
			c.MaxRuntimeMS = 3000
			ev := verify(t, v, request(t, srv.URL, c))
			wantStatus(t, ev, "busy", tc.want)
			if tc.want == contracts.StatusTimeout && !strings.Contains(ev.Results[0].Error, "never yielded") {
				t.Errorf("error %q does not say the page's script never yielded", ev.Results[0].Error)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if !slices.ContainsFunc(rec.msgs, func(m string) bool { return strings.Contains(m, "answers nothing while its clock stands still") }) {
				t.Errorf("the page was not found stuck on its clock: %q", rec.msgs)
			}
		})
	}
}
