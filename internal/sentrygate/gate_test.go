package sentrygate_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/sentrygate"
)

// fakeSentry answers the events endpoint with a scripted sequence of bodies (the last one
// repeats) and records every request.
type fakeSentry struct {
	mu      sync.Mutex
	reqs    []*http.Request
	status  int
	answers []string
}

func (f *fakeSentry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r.Clone(context.Background()))
	n := len(f.reqs)
	status, answers := f.status, f.answers
	f.mu.Unlock()
	body := answers[min(n, len(answers))-1]
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (f *fakeSentry) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.reqs...)
}

// clock is a fake clock; Sleep advances it unless stuck.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	stuck bool
	slept []time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	if !c.stuck {
		c.now = c.now.Add(d)
	}
	return nil
}

var (
	from = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	to   = from.Add(20*time.Second + 300*time.Millisecond)
	req  = capability.GateRequest{ContractID: "c-watchlist", Attempt: 2, From: from.Format(time.RFC3339Nano), To: to.Format(time.RFC3339Nano)}
)

func newGate(t *testing.T, f *fakeSentry, c *clock, project string) *sentrygate.Gate {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	g, err := sentrygate.New(sentrygate.Config{Token: "sntryu_read_token", Org: "acme", Project: project, BaseURL: srv.URL,
		Grace: 30 * time.Second, Interval: 10 * time.Second, MaxPolls: 6, Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGateQueriesTheAttemptsReleaseAndEnvironment(t *testing.T) {
	f := &fakeSentry{answers: []string{errorEvents}}
	c := &clock{now: to.Add(time.Minute)}
	res, err := newGate(t, f, c, "4505321021").Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "sentry" || len(res.Errors) != 2 ||
		res.Errors[0] != "sentry error: TypeError: Cannot read properties of undefined (reading 'price') (event 9999aaaaca8b46d797c23c6077c6ff01 at 2025-01-01T12:00:03+00:00)" ||
		!strings.HasPrefix(res.Errors[1], "sentry fatal: ChunkLoadError") {
		t.Fatalf("%+v", res)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodGet || r.URL.Path != "/api/0/organizations/acme/events/" {
		t.Fatalf("%s %s", r.Method, r.URL.Path)
	}
	if r.Header.Get("Authorization") != "Bearer sntryu_read_token" {
		t.Fatalf("auth %q", r.Header.Get("Authorization"))
	}
	q := r.URL.Query()
	want := url.Values{
		"field":       {"id", "title", "level", "timestamp", "release", "environment"},
		"query":       {"release:signoff-c-watchlist-2 level:[error,fatal] !event.type:transaction"},
		"environment": {"preview-c-watchlist"},
		"project":     {"4505321021"},
		"start":       {"2025-01-01T12:00:00Z"},
		"end":         {"2025-01-01T12:00:21Z"},
		"sort":        {"-timestamp"},
		"per_page":    {"100"},
	}
	if q.Encode() != want.Encode() {
		t.Fatalf("query\n%s\nwant\n%s", q.Encode(), want.Encode())
	}
	if sentrygate.Release("c-watchlist", 2) != "signoff-c-watchlist-2" || sentrygate.Environment("c-watchlist") != "preview-c-watchlist" {
		t.Fatal("release or environment naming changed")
	}
}

func TestGateReadsTheDocumentedExample(t *testing.T) {
	f := &fakeSentry{answers: []string{docQueryEvents}}
	c := &clock{now: to.Add(time.Minute)}
	res, err := newGate(t, f, c, "web").Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 3 {
		t.Fatalf("%+v", res)
	}
	q := f.requests()[0].URL.Query()
	if q.Get("query") != "project:web release:signoff-c-watchlist-2 level:[error,fatal] !event.type:transaction" || q.Has("project") {
		t.Fatalf("a project slug must go in the search: %v", q)
	}
}

func TestGatePollsThroughIngestionLag(t *testing.T) {
	// Nothing yet at the first two queries; the errors arrive with the third.
	f := &fakeSentry{answers: []string{noEvents, noEvents, errorEvents}}
	c := &clock{now: to.Add(time.Second)}
	res, err := newGate(t, f, c, "web").Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 2 || len(f.requests()) != 3 {
		t.Fatalf("%+v after %d requests", res, len(f.requests()))
	}
}

func TestGatePassesOnlyAfterTheGrace(t *testing.T) {
	f := &fakeSentry{answers: []string{noEvents}}
	c := &clock{now: to.Add(time.Second)}
	res, err := newGate(t, f, c, "web").Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "sentry" || res.Errors == nil || len(res.Errors) != 0 {
		t.Fatalf("%+v", res)
	}
	// Queries at +1 s, +11 s, +21 s and +30 s: the last pause is cut to the grace's end,
	// and only that query, made once To + 30 s had come, may answer clean.
	if n := len(f.requests()); n != 4 {
		t.Fatalf("%d requests", n)
	}
	if !c.Now().Equal(to.Add(30 * time.Second)) {
		t.Fatalf("clean answer given at %s", c.Now().Sub(to))
	}
	c2 := &clock{now: to.Add(25 * time.Second)}
	f2 := &fakeSentry{answers: []string{noEvents}}
	if _, err := newGate(t, f2, c2, "web").Check(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(c2.slept) != 1 || c2.slept[0] != 5*time.Second {
		t.Fatalf("slept %v, want one 5 s pause to the grace's end", c2.slept)
	}
}

func TestGatePollingStopsAtTheBound(t *testing.T) {
	f := &fakeSentry{answers: []string{noEvents}}
	c := &clock{now: to, stuck: true} // the grace never passes
	_, err := newGate(t, f, c, "web").Check(context.Background(), req)
	if !errors.Is(err, sentrygate.ErrInconclusive) {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 6 {
		t.Fatalf("%d requests, want the bound of 6", n)
	}
}

func TestGateReportsAPIErrors(t *testing.T) {
	f := &fakeSentry{status: http.StatusUnauthorized, answers: []string{docError}}
	c := &clock{now: to.Add(time.Minute)}
	_, err := newGate(t, f, c, "web").Check(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "sntryu_read_token") {
		t.Fatalf("err = %v", err)
	}
	if len(f.requests()) != 1 {
		t.Fatal("an auth failure was polled")
	}
	f2 := &fakeSentry{answers: []string{`{"detail": "no data key"}`}}
	if _, err := newGate(t, f2, c, "web").Check(context.Background(), req); err == nil {
		t.Fatal("an answer without data passed as clean")
	}
}

func TestGateRefusesBadRequests(t *testing.T) {
	f := &fakeSentry{answers: []string{noEvents}}
	g := newGate(t, f, &clock{now: to.Add(time.Minute)}, "web")
	for name, r := range map[string]capability.GateRequest{
		"window backwards": {ContractID: "c-watchlist", Attempt: 1, From: req.To, To: req.From},
		"no window":        {ContractID: "c-watchlist", Attempt: 1},
		"unsafe contract":  {ContractID: "x space", Attempt: 1, From: req.From, To: req.To},
	} {
		if _, err := g.Check(context.Background(), r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(f.requests()) != 0 {
		t.Fatal("Sentry was asked about a refused request")
	}
}
