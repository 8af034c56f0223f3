package authoring

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAdmissionRateLimitFile is TestAdmissionRateLimit with every request made by a fresh
// Admission and FileRates on one path, as each `signoff contract new` is its own process.
func TestAdmissionRateLimitFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rates.json")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	process := func(allow string, limit int) *Admission {
		return &Admission{Allow: []string{allow}, Limit: limit, Window: time.Hour,
			Now: func() time.Time { return now }, Store: FileRates{Path: path}}
	}
	for i := 0; i < 2; i++ {
		if err := process("*/*", 2).Admit("ann", "acme", "shop"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Minute)
	}
	// The in-memory default forgets between processes: this is what FileRates fixes.
	if err := (&Admission{Allow: []string{"*/*"}, Limit: 2, Window: time.Hour}).Admit("ann", "acme", "shop"); err != nil {
		t.Fatalf("in-memory admission: %v", err)
	}
	err := process("*/*", 2).Admit("ann", "acme", "shop")
	var ae *AdmissionError
	if !errors.As(err, &ae) || ae.Code != AdmitRateLimited || ae.RetryAfter != 40*time.Minute ||
		ae.Reason != "ann made 2 requests in the last 1h0m0s (limit 2); retry in 40m0s" {
		t.Fatalf("third request: %v (%+v), want rate_limited, retry in 40m", err, ae)
	}
	if err := process("*/*", 2).Admit("bob", "acme", "shop"); err != nil {
		t.Errorf("another requester is limited too: %v", err)
	}
	// A refused request is not counted: after the first one leaves the window, one fits.
	now = now.Add(41 * time.Minute)
	if err := process("*/*", 2).Admit("ann", "acme", "shop"); err != nil {
		t.Errorf("after the window: %v", err)
	}
	if err := process("*/*", 2).Admit("ann", "acme", "shop"); err == nil {
		t.Error("limit not enforced after the window moved")
	}
	if err := process("*/*", 2).Admit("", "acme", "shop"); err == nil {
		t.Error("an anonymous request passed a per-requester limit")
	}
	// Not-allowed repositories do not use up the requester's budget.
	_ = process("acme/*", 1).Admit("cy", "evil", "x")
	if err := process("acme/*", 1).Admit("cy", "acme", "shop"); err != nil {
		t.Errorf("refused request counted: %v", err)
	}
}

// TestFileRatesConcurrent: processes racing for the last slots cannot overshoot the limit.
// Each goroutine opens the lock file itself, so flock excludes them as it would processes.
func TestFileRatesConcurrent(t *testing.T) {
	const n, limit = 16, 5
	path := filepath.Join(t.TempDir(), "rates.json")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &Admission{Allow: []string{"*/*"}, Limit: limit, Window: time.Hour,
				Now: func() time.Time { return now.Add(time.Duration(i) * time.Millisecond) }, Store: FileRates{Path: path}}
			<-start
			errs[i] = a.Admit("agent1qexample", "acme", "shop")
		}()
	}
	close(start)
	wg.Wait()
	admitted, limited := 0, 0
	for i, err := range errs {
		var ae *AdmissionError
		switch {
		case err == nil:
			admitted++
		case errors.As(err, &ae) && ae.Code == AdmitRateLimited:
			limited++
		default:
			t.Errorf("request %d: %v", i, err)
		}
	}
	if admitted != limit || limited != n-limit {
		t.Errorf("admitted %d, limited %d; want %d and %d", admitted, limited, limit, n-limit)
	}
	if got := readRates(t, path).Requesters["agent1qexample"]; len(got) != limit || !slices.IsSortedFunc(got, time.Time.Compare) {
		t.Errorf("file holds %v, want %d stamps oldest first", got, limit)
	}
}

// TestFileRatesCorrupt: a file that cannot be read refuses the request, says how to recover,
// and is left exactly as it was.
func TestFileRatesCorrupt(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for name, content := range map[string]string{
		"not json":       `{"version":1,"requesters":{"ann":[`,
		"empty":          "",
		"wrong version":  `{"version":2,"requesters":{}}`,
		"no version":     `{"requesters":{}}`,
		"bad stamp":      `{"version":1,"requesters":{"ann":["yesterday"]}}`,
		"unknown field":  `{"version":1,"requesters":{},"limit":1000}`,
		"trailing data":  `{"version":1,"requesters":{}} {}`,
		"wrong shape":    `{"version":1,"requesters":["ann"]}`,
		"top-level null": `null`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rates.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, ok, err := FileRates{Path: path}.Take("ann", now, 5, time.Hour)
			if err == nil || ok || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete it") {
				t.Errorf("Take = ok %v, %v; want an error naming %s and the fix", ok, err, path)
			}
			a := &Admission{Allow: []string{"*/*"}, Limit: 5, Window: time.Hour, Store: FileRates{Path: path}}
			var ae *AdmissionError
			if err := a.Admit("ann", "acme", "shop"); err == nil || errors.As(err, &ae) {
				t.Errorf("Admit on a corrupt file = %v, want a store error", err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("file changed to %q", b)
			}
		})
	}
}

// TestFileRatesFiles: the file and its lock are private, a missing parent is created private,
// a too-open file is replaced by a private one, and nothing else is left in the directory.
func TestFileRatesFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "signoff")
	path := filepath.Join(dir, "rates.json")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	odd := []string{"agent1qw8x0example", "ann", "../../etc/passwd", "a/b", "名前", ".lock", ""}
	for _, r := range odd {
		if _, ok, err := (FileRates{Path: path}).Take(r, now, 1, time.Hour); !ok || err != nil {
			t.Fatalf("Take(%q) = %v, %v", r, ok, err)
		}
	}
	wantMode := map[string]os.FileMode{dir: 0o700, path: 0o600, path + ".lock": 0o600}
	for p, want := range wantMode {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %o", p, fi.Mode(), err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"rates.json", "rates.json.lock"}) {
		t.Errorf("directory holds %v", names)
	}
	got := readRates(t, path)
	for _, r := range odd {
		if len(got.Requesters[r]) != 1 {
			t.Errorf("requester %q: %v", r, got.Requesters[r])
		}
	}
	if _, ok, _ := (FileRates{Path: path}).Take("../../etc/passwd", now, 1, time.Hour); ok {
		t.Error("a requester named like a path escaped its limit")
	}
	if _, _, err := (FileRates{Path: path}).Take("bad\xffname", now, 1, time.Hour); err == nil {
		t.Error("a requester that JSON cannot keep was accepted")
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (FileRates{Path: path}).Take("bob", now, 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten file mode %v, want 0600", fi.Mode())
	}
	if _, _, err := (FileRates{}).Take("ann", now, 1, time.Hour); err == nil {
		t.Error("no path accepted")
	}
}

// TestFileRatesPrunes: stamps outside the window, and requesters left with none, are dropped
// so the file does not grow forever.
func TestFileRatesPrunes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rates.json")
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rates := FileRates{Path: path}
	for _, s := range []struct {
		who string
		at  time.Duration
	}{{"ann", 0}, {"bob", 10 * time.Minute}, {"bob", 40 * time.Minute}} {
		if _, ok, err := rates.Take(s.who, t0.Add(s.at), 3, time.Hour); !ok || err != nil {
			t.Fatalf("%s at %s: %v %v", s.who, s.at, ok, err)
		}
	}
	if _, ok, err := rates.Take("cy", t0.Add(75*time.Minute), 3, time.Hour); !ok || err != nil {
		t.Fatalf("cy: %v %v", ok, err)
	}
	got := readRates(t, path)
	if _, kept := got.Requesters["ann"]; kept || len(got.Requesters) != 2 {
		t.Errorf("after 75m the file holds %v, want bob and cy only", got.Requesters)
	}
	if b := got.Requesters["bob"]; len(b) != 1 || !b[0].Equal(t0.Add(40*time.Minute)) {
		t.Errorf("bob's stamps %v, want only the one at 40m", b)
	}
	// A refusal still prunes: only the newest of bob's and cy's stamps remain in the window.
	if _, ok, _ := rates.Take("cy", t0.Add(101*time.Minute), 1, time.Hour); ok {
		t.Error("cy's second request in the window admitted")
	}
	if got := readRates(t, path); len(got.Requesters) != 1 || len(got.Requesters["cy"]) != 1 {
		t.Errorf("after 101m the file holds %v, want cy's one stamp", got.Requesters)
	}
}

func readRates(t *testing.T, path string) rateFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f rateFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 {
		t.Fatalf("%s: %v (version %d)", path, err, f.Version)
	}
	return f
}
