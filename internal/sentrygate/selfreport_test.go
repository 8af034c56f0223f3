package sentrygate_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getsentry/sentry-go"

	"github.com/signoff/signoff/internal/sentrygate"
)

func TestSelfReportingSendsSignoffsErrors(t *testing.T) {
	var mu sync.Mutex
	var paths, auths, bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths, auths, bodies = append(paths, r.URL.Path), append(auths, r.Header.Get("X-Sentry-Auth")), append(bodies, string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	dsn := "http://publickey@" + strings.TrimPrefix(srv.URL, "http://") + "/42"
	flush, err := sentrygate.InitSelfReporting(dsn, "signoff@1.2.3", "test-env")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sentry.Init(sentry.ClientOptions{}) }()
	sentry.CaptureException(errors.New("worker lost its lock"))
	flush()
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "/api/42/envelope/" || !strings.Contains(auths[0], "sentry_key=publickey") {
		t.Fatalf("paths %v auth %v", paths, auths)
	}
	for _, want := range []string{`"release":"signoff@1.2.3"`, `"environment":"test-env"`, "worker lost its lock"} {
		if !strings.Contains(bodies[0], want) {
			t.Errorf("envelope lacks %s:\n%s", want, bodies[0])
		}
	}
}

func TestSelfReportingWithoutDSNIsANoOp(t *testing.T) {
	flush, err := sentrygate.InitSelfReporting("", "signoff@1.2.3", "")
	if err != nil || flush == nil {
		t.Fatal(err)
	}
	flush()
	if _, err := sentrygate.InitSelfReporting("not a dsn", "x", ""); err == nil {
		t.Fatal("a malformed DSN was accepted")
	}
}
