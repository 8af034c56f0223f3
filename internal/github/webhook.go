package github

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/executor"
)

// SignatureHeader carries the HMAC-SHA256 of the delivery's body under the webhook secret.
const SignatureHeader = "X-Hub-Signature-256"

// MaxWebhookBody is GitHub's cap on a delivery (25 MB); anything longer is not from GitHub.
const MaxWebhookBody = contracts.MaxWebhookBytes

// HeadEvent is a push to a Signoff branch that moved a PR head.
type HeadEvent struct {
	ContractID string
	Branch     string
	Repo       string // owner/name
	Number     int
	Before     string
	HeadSHA    string
	DeliveryID string
}

// Webhook receives GitHub's pull_request deliveries. A synchronize event on a signoff/
// branch calls OnHeadChanged (the lead signals pr_head_changed); eligibility itself is
// decided by re-reading the head, never by trusting the delivery alone.
type Webhook struct {
	secret        []byte
	onHeadChanged func(ctx context.Context, ev HeadEvent) error
}

// NewWebhook refuses an empty secret: an unsigned webhook would let anyone revoke or fake
// head moves.
func NewWebhook(secret string, onHeadChanged func(ctx context.Context, ev HeadEvent) error) (*Webhook, error) {
	if secret == "" {
		return nil, errors.New("github webhook: a secret is required [GITHUB_WEBHOOK_SECRET]")
	}
	if onHeadChanged == nil {
		return nil, errors.New("github webhook: no head-changed callback")
	}
	return &Webhook{secret: []byte(secret), onHeadChanged: onHeadChanged}, nil
}

// ValidSignature checks an X-Hub-Signature-256 value ("sha256=<hex>") against the body in
// constant time.
func ValidSignature(secret, body []byte, header string) bool {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxWebhookBody))
	if err != nil {
		http.Error(rw, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	// The signature is checked on the raw bytes before anything else reads them.
	if !ValidSignature(w.secret, body, r.Header.Get(SignatureHeader)) {
		http.Error(rw, "bad or missing "+SignatureHeader, http.StatusUnauthorized)
		return
	}
	switch r.Header.Get("X-GitHub-Event") {
	case "ping":
		fmt.Fprintln(rw, "pong")
		return
	case "pull_request":
	default:
		rw.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(rw, "ignored: not a pull_request event")
		return
	}
	payload := body
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(rw, "bad form body", http.StatusBadRequest)
			return
		}
		payload = []byte(form.Get("payload"))
	}
	if err := contracts.CheckJSON(payload, "GitHub webhook", MaxWebhookBody, contracts.MaxJSONDepth); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	var ev gh.PullRequestEvent
	if err := json.Unmarshal(payload, &ev); err != nil || ev.PullRequest == nil {
		http.Error(rw, "not a pull_request payload", http.StatusBadRequest)
		return
	}
	if ev.GetAction() != "synchronize" {
		rw.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(rw, "ignored: action", ev.GetAction())
		return
	}
	head := ev.PullRequest.GetHead()
	branch := head.GetRef()
	contractID, ok := strings.CutPrefix(branch, executor.BranchPrefix)
	if !ok || !contracts.ValidContractID(contractID) {
		rw.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(rw, "ignored: not a Signoff branch")
		return
	}
	repo := ev.GetRepo().GetFullName()
	// A fork can name a branch signoff/<id> too; only the repository's own branch counts.
	if headRepo := head.GetRepo().GetFullName(); headRepo == "" || !strings.EqualFold(headRepo, repo) {
		rw.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(rw, "ignored: head is in another repository")
		return
	}
	sha := head.GetSHA()
	if sha == "" {
		sha = ev.GetAfter()
	}
	if !fullSHA.MatchString(sha) {
		http.Error(rw, "head SHA missing", http.StatusBadRequest)
		return
	}
	hev := HeadEvent{ContractID: contractID, Branch: branch, Repo: repo, Number: ev.GetNumber(),
		Before: ev.GetBefore(), HeadSHA: sha, DeliveryID: r.Header.Get("X-GitHub-Delivery")}
	if err := w.onHeadChanged(r.Context(), hev); err != nil {
		// GitHub shows the failure and the delivery can be redelivered.
		http.Error(rw, "head change not recorded", http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(rw, "head change recorded for", contractID)
}
