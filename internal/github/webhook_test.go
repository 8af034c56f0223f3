package github_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts/contractstest"
	signoffgh "github.com/signoff/signoff/internal/github"
)

const (
	hookSecret = "webhook-secret-for-tests"
	beforeSHA  = "1111111111111111111111111111111111111111"
	afterSHA   = "2222222222222222222222222222222222222222"
)

func TestSignatureMatchesGitHubsPublishedVector(t *testing.T) {
	if !signoffgh.ValidSignature([]byte(docWebhookSecret), []byte(docWebhookPayload), docWebhookSignature) {
		t.Fatal("GitHub's published test vector does not verify")
	}
	bad := map[string][2]string{
		"tampered body":   {docWebhookPayload + " ", docWebhookSignature},
		"other signature": {docWebhookPayload, "sha256=" + strings.Repeat("0", 64)},
		"sha1 only":       {docWebhookPayload, "sha1=01dc10d0c83e72ed246219cdd91669667fe2ca59"},
		"no prefix":       {docWebhookPayload, strings.TrimPrefix(docWebhookSignature, "sha256=")},
		"not hex":         {docWebhookPayload, "sha256=zz"},
		"empty":           {docWebhookPayload, ""},
	}
	for name, c := range bad {
		if signoffgh.ValidSignature([]byte(docWebhookSecret), []byte(c[0]), c[1]) {
			t.Errorf("%s: accepted", name)
		}
	}
}

func sign(body string) string {
	m := hmac.New(sha256.New, []byte(hookSecret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

type hookRecorder struct {
	events []signoffgh.HeadEvent
	fail   error
}

func (h *hookRecorder) record(_ context.Context, ev signoffgh.HeadEvent) error {
	h.events = append(h.events, ev)
	return h.fail
}

func deliver(t *testing.T, hook http.Handler, event, contentType, body, signature string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/webhooks/github", strings.NewReader(body))
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	r.Header.Set("Content-Type", contentType)
	if signature != "" {
		r.Header.Set("X-Hub-Signature-256", signature)
	}
	rw := httptest.NewRecorder()
	hook.ServeHTTP(rw, r)
	return rw
}

func payload(branch, headRepo string) string {
	return fmt.Sprintf(syncPayload, branch, headRepo, beforeSHA, afterSHA)
}

func TestWebhookReportsAHeadMove(t *testing.T) {
	rec := &hookRecorder{}
	hook, err := signoffgh.NewWebhook(hookSecret, rec.record)
	if err != nil {
		t.Fatal(err)
	}
	body := payload(branch, "octocat/Hello-World")
	rw := deliver(t, hook, "pull_request", "application/json", body, sign(body))
	if rw.Code != http.StatusOK || len(rec.events) != 1 {
		t.Fatalf("%d %s %v", rw.Code, rw.Body, rec.events)
	}
	ev := rec.events[0]
	if ev.ContractID != contractID || ev.Branch != branch || ev.HeadSHA != afterSHA || ev.Before != beforeSHA ||
		ev.Repo != "octocat/Hello-World" || ev.Number != 1347 || ev.DeliveryID == "" {
		t.Fatalf("%+v", ev)
	}
	// The same delivery as a form post (a webhook configured with that content type).
	form := "payload=" + url.QueryEscape(body)
	if rw := deliver(t, hook, "pull_request", "application/x-www-form-urlencoded", form, sign(form)); rw.Code != http.StatusOK || len(rec.events) != 2 {
		t.Fatalf("form: %d %s", rw.Code, rw.Body)
	}
}

func TestWebhookRejectsBadSignatures(t *testing.T) {
	rec := &hookRecorder{}
	hook, _ := signoffgh.NewWebhook(hookSecret, rec.record)
	body := payload(branch, "octocat/Hello-World")
	tampered := strings.Replace(body, afterSHA, strings.Repeat("3", 40), 2)
	other := hmac.New(sha256.New, []byte("another secret"))
	other.Write([]byte(body))
	for name, c := range map[string][2]string{
		"missing signature": {body, ""},
		"wrong secret":      {body, "sha256=" + hex.EncodeToString(other.Sum(nil))},
		"tampered body":     {tampered, sign(body)},
		"garbage":           {body, "sha256=not-hex"},
	} {
		if rw := deliver(t, hook, "pull_request", "application/json", c[0], c[1]); rw.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d", name, rw.Code)
		}
	}
	if len(rec.events) != 0 {
		t.Fatalf("a rejected delivery reached the workflow: %v", rec.events)
	}
}

func TestWebhookIgnoresWhatIsNotASignoffHeadMove(t *testing.T) {
	rec := &hookRecorder{}
	hook, _ := signoffgh.NewWebhook(hookSecret, rec.record)
	opened := strings.Replace(payload(branch, "octocat/Hello-World"), `"action": "synchronize"`, `"action": "opened"`, 1)
	for name, body := range map[string]string{
		"another branch":        payload("feature/x", "octocat/Hello-World"),
		"a fork's signoff/ ref": payload(branch, "mallory/Hello-World"),
		"opened, not a push":    opened,
	} {
		if rw := deliver(t, hook, "pull_request", "application/json", body, sign(body)); rw.Code != http.StatusAccepted {
			t.Errorf("%s: %d %s", name, rw.Code, rw.Body)
		}
	}
	if rw := deliver(t, hook, "push", "application/json", "{}", sign("{}")); rw.Code != http.StatusAccepted {
		t.Errorf("push event: %d", rw.Code)
	}
	if rw := deliver(t, hook, "ping", "application/json", "{}", sign("{}")); rw.Code != http.StatusOK {
		t.Errorf("ping: %d", rw.Code)
	}
	if len(rec.events) != 0 {
		t.Fatalf("%v", rec.events)
	}
	r := httptest.NewRequest(http.MethodGet, "/webhooks/github", nil)
	rw := httptest.NewRecorder()
	hook.ServeHTTP(rw, r)
	if rw.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rw.Code)
	}
}

func TestWebhookReportsCallbackFailure(t *testing.T) {
	rec := &hookRecorder{fail: errors.New("workflow not found")}
	hook, _ := signoffgh.NewWebhook(hookSecret, rec.record)
	body := payload(branch, "octocat/Hello-World")
	if rw := deliver(t, hook, "pull_request", "application/json", body, sign(body)); rw.Code != http.StatusInternalServerError {
		t.Fatalf("%d", rw.Code)
	}
	if _, err := signoffgh.NewWebhook("", rec.record); err == nil {
		t.Fatal("an unsigned webhook was allowed")
	}
}

// A signed delivery that is a nesting bomb is refused with the limit named, before decoding.
func TestWebhookRefusesAJSONBomb(t *testing.T) {
	hook, err := signoffgh.NewWebhook(hookSecret, (&hookRecorder{}).record)
	if err != nil {
		t.Fatal(err)
	}
	body := string(contractstest.DepthBomb(600 << 10))
	rw := deliver(t, hook, "pull_request", "application/json", body, sign(body))
	if rw.Code != http.StatusBadRequest || !strings.Contains(rw.Body.String(), "nesting deeper than the limit") {
		t.Fatalf("%d %s, want 400 naming the depth limit", rw.Code, rw.Body)
	}
}
