package verify

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/deployment"
)

// Verifier runs contracts' criteria against previews and signs what it saw. One Verifier serves
// a worker. Concurrent Verify calls are safe (each uses its own browser contexts), but on two
// cores one run at a time is what the timings assume.
type Verifier struct {
	Config Config
	// Key signs evidence. It is the only secret the verify queue holds.
	Key ed25519.PrivateKey
	// Driver is the running Playwright driver. Nil: Verify starts one for the call (about 2 s)
	// and stops it afterwards.
	Driver *Driver
	// Source provides the browser. Nil: a local Chromium launched per run.
	Source BrowserSource
	// BaseBrowsers, when set, shares one browser (from Source) among the base checks
	// (attempt 0) measuring the same preview of the same commit at once. Nil: every run opens
	// its own from Source.
	BaseBrowsers *Pool
	// HTTPClient reaches the preview for /__verification and http criteria. Nil: a client
	// with a 15 s timeout that never follows a redirect to another host.
	HTTPClient *http.Client
	// Logger receives timings and progress at debug level. Nil: discarded.
	Logger *slog.Logger
	// Commit states which commit the preview serves (deployment.Vercel for a Vercel
	// deployment). Nil: the preview's /__verification, which Signoff's preview proxy answers.
	Commit deployment.Source
}

// Request is everything the verifier is allowed to know about a verification.
type Request struct {
	ContractID     string
	ContractHash   string
	Attempt        int
	Criteria       []contracts.Criterion
	EvidencePolicy contracts.EvidencePolicy
	// Verifier is the verifier the contract was frozen against. When its digest is set and
	// differs from Digest(), nothing is measured: the evidence carries the real digest and the
	// policy turns the mismatch into verification_error.
	Verifier    contracts.VerifierRef
	ExpectedSHA string
	PreviewURL  string
	// AllowedOrigins are the contract's allowed_origins: the only origins besides the
	// preview's that the page may load anything from.
	AllowedOrigins []string
	// Variant, when set, is the base check's lazy variant: Signoff's own edits applied to
	// every page before it is measured. The evidence names it, and the policy never takes
	// it for a verdict.
	Variant *contracts.Variant
	// OutDir receives the screenshots and traces (created if missing).
	OutDir string
	// Progress, when set, is called as criteria start and finish (for activity heartbeats),
	// one call at a time.
	Progress func(Progress)
}

// Progress reports where a run is.
type Progress struct {
	Index     int    // 0-based criterion index
	Total     int    // number of criteria
	Criterion string // criterion id
	Viewport  string // "390x844", empty for http criteria and criterion-level events
	Phase     string // "start", "viewport", "done"
	Status    string // the criterion's status, on "done"
}

var (
	hashRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
	idRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
)

func (r *Request) validate() (*url.URL, error) {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(r.ContractID) == "" {
		add("contract id is empty")
	}
	if !hashRe.MatchString(r.ContractHash) {
		add("contract hash must be 64 lowercase hex digits")
	}
	if r.Attempt < 0 || r.Attempt > 3 {
		add("attempt %d is outside 0..3", r.Attempt)
	}
	if r.OutDir == "" {
		add("no output directory")
	}
	if len(r.Criteria) == 0 {
		add("no criteria")
	}
	seen := map[string]bool{}
	for i, c := range r.Criteria {
		if !idRe.MatchString(c.ID) {
			add("criterion %d: id %q is not [a-z0-9-]", i, c.ID)
		}
		if seen[c.ID] {
			add("criterion %d: id %q is repeated", i, c.ID)
		}
		seen[c.ID] = true
	}
	u, err := url.Parse(r.PreviewURL)
	switch {
	case err != nil:
		add("preview url: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		add("preview url must be http or https")
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		add("preview url must be a plain origin (optionally with a path)")
	case contracts.URLOrigin(u) == "":
		add("preview url %q has no origin: its port must be a number up to 65535", r.PreviewURL)
	}
	if r.Variant != nil {
		if err := contracts.ValidateVariant(*r.Variant); err != nil {
			add("%v", err)
		}
	}
	if len(probs) > 0 {
		return nil, &RequestError{Problems: probs}
	}
	return u, nil
}

// Verify measures every criterion against the preview and returns signed evidence. It returns
// an error only when no trustworthy evidence can be produced at all (bad request, no key,
// browser setup missing or the browser failed to start); a criterion that cannot be measured
// is reported in the evidence with status error or timeout.
//
// It first reads the commit the preview runs from <preview>/__verification. When that is
// missing or differs from the expected SHA, nothing is measured: the evidence records the SHA
// as read ("" if none) and has no results. It reads it again after measuring, and records a
// different answer then.
func (v *Verifier) Verify(ctx context.Context, req Request) (*contracts.Evidence, error) {
	if len(v.Key) != ed25519.PrivateKeySize {
		return nil, errors.New("verify: no signing key")
	}
	base, err := req.validate()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(req.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("verify: output directory: %w", err)
	}
	log := v.logger()
	started := time.Now()
	ev := &contracts.Evidence{
		SchemaVersion: contracts.EvidenceSchemaVersion,
		ContractID:    req.ContractID,
		ContractHash:  req.ContractHash,
		Attempt:       req.Attempt,
		Verifier:      Ref(),
		ExpectedSHA:   req.ExpectedSHA,
		PreviewURL:    req.PreviewURL,
		Browser:       contracts.Browser{Name: "none", Version: "", Mode: ModeHTTP},
		StartedAt:     started.UTC().Format(time.RFC3339Nano),
		Results:       []contracts.CriterionResult{},
		Artifacts:     []contracts.Artifact{},
	}
	if req.Variant != nil {
		ev.Variant = contracts.VariantID(*req.Variant)
	}

	ev.RuntimeSHA = v.runtimeSHA(ctx, base)
	log.Debug("runtime sha", "runtime", ev.RuntimeSHA, "expected", req.ExpectedSHA, "ms", time.Since(started).Milliseconds())
	switch {
	case ev.RuntimeSHA == "" || ev.RuntimeSHA != req.ExpectedSHA:
		log.Debug("preview does not run the expected commit; nothing measured")
	case req.Verifier.Digest != "" && req.Verifier.Digest != ev.Verifier.Digest:
		log.Debug("contract frozen against another verifier digest; nothing measured", "contract", req.Verifier.Digest, "verifier", ev.Verifier.Digest)
	default:
		if err := v.measure(ctx, &req, base, ev); err != nil {
			return nil, err
		}
		// A preview redeployed mid-run was measured as a mix of commits: the later SHA goes
		// into the evidence, so the policy refuses it. (A preview that stopped answering only
		// now says nothing about what was measured; its failures show in the results.)
		if after := v.runtimeSHA(ctx, base); after != "" && after != ev.RuntimeSHA {
			log.Debug("the preview changed commit during the run", "before", ev.RuntimeSHA, "after", after)
			ev.RuntimeSHA = after
		}
	}
	ev.FinishedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := ev.Sign(v.Key); err != nil {
		return nil, fmt.Errorf("verify: sign evidence: %w", err)
	}
	log.Debug("verification done", "ms", time.Since(started).Milliseconds(), "results", len(ev.Results))
	return ev, nil
}

// measure runs every criterion, opening the browser only if some criterion needs one.
func (v *Verifier) measure(ctx context.Context, req *Request, base *url.URL, ev *contracts.Evidence) error {
	r := &run{v: v, req: req, base: base, log: v.logger()}
	needBrowser := false
	for _, c := range req.Criteria {
		if c.Assert.Kind != contracts.KindHTTP {
			needBrowser = true
		}
	}
	if needBrowser {
		driver := v.Driver
		if driver == nil {
			d, err := StartDriver(v.Config)
			if err != nil {
				return err
			}
			defer d.Stop()
			driver = d
		}
		t := time.Now()
		sess, err := v.openBrowser(ctx, driver.Playwright(), req)
		if err != nil {
			return fmt.Errorf("verify: open browser: %w", err)
		}
		defer sess.Close()
		defer r.closeTargets() // before the session: a warm browser outlives the run
		r.browser = sess
		ev.Browser = sess.Info
		r.log.Debug("browser open", "mode", sess.Info.Mode, "version", sess.Info.Version, "ms", time.Since(t).Milliseconds())
	}
	// Pages and http criteria run concurrently, results kept in contract order: most of a
	// page's time is spent waiting on the browser, not computing.
	outs := r.measureAll(ctx)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	for _, o := range outs {
		ev.Results = append(ev.Results, o.res)
		ev.Artifacts = append(ev.Artifacts, o.arts...)
	}
	return nil
}

// openBrowser opens the run's browser: the one shared by the base checks of this preview and
// commit when there is a pool for them, else one from Source.
func (v *Verifier) openBrowser(ctx context.Context, pw *playwright.Playwright, req *Request) (*BrowserSession, error) {
	src := v.Source
	if src == nil {
		src = v.Config.local()
	}
	if v.BaseBrowsers != nil && req.Attempt == 0 {
		return v.BaseBrowsers.Open(ctx, pw, req.ExpectedSHA+" "+req.PreviewURL, src)
	}
	return src.Open(ctx, pw)
}

// pageConcurrency is how many pages (and http criteria) are measured at once.
const pageConcurrency = 2

func (r *run) progress(p Progress) {
	if r.req.Progress != nil {
		r.progressMu.Lock()
		defer r.progressMu.Unlock()
		r.req.Progress(p)
	}
}

func (v *Verifier) logger() *slog.Logger {
	if v.Logger != nil {
		return v.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (v *Verifier) client() *http.Client {
	if v.HTTPClient != nil {
		return v.HTTPClient
	}
	return &http.Client{
		Timeout: 15 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return http.ErrUseLastResponse
			}
			if contracts.URLOrigin(req.URL) != contracts.URLOrigin(via[0].URL) {
				return http.ErrUseLastResponse // never leave the app under test
			}
			return nil
		},
	}
}

// runtimeSHA reads {"commit_sha": ...} from the preview. Anything else reads as "".
func (v *Verifier) runtimeSHA(ctx context.Context, base *url.URL) string {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if v.Commit != nil {
		s, err := v.Commit.CommitSHA(ctx, base.String())
		if err != nil {
			return ""
		}
		return cleanSHA(s)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, joinRoute(base, "/__verification"), nil)
	if err != nil {
		return ""
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := v.client().Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	var body struct {
		CommitSHA any `json:"commit_sha"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil {
		return ""
	}
	s, ok := body.CommitSHA.(string)
	if !ok {
		return ""
	}
	return cleanSHA(s)
}

// cleanSHA is a stated commit as evidence records it: "" for anything unprintable or long.
func cleanSHA(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 128 || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0 {
		return ""
	}
	return s
}

// joinRoute puts a criterion route (a path, validated by the contract loader to stay on the
// app) under the preview's base URL.
func joinRoute(base *url.URL, route string) string {
	return strings.TrimRight(base.Scheme+"://"+base.Host+base.EscapedPath(), "/") + route
}

// judge is the verifier's own status for a criterion, by the same rules the policy recomputes:
// every check of contracts.ChecksFor compared with contracts.Compare. An observed value that
// is missing or unusable makes the result an error, as it makes the policy's incomplete.
func judge(c contracts.Criterion, observed map[string]any) (status, problem string) {
	checks, err := contracts.ChecksFor(c)
	if err != nil {
		return contracts.StatusError, err.Error()
	}
	failed := false
	for _, ch := range checks {
		switch r := contracts.EvaluateCheck(ch, observed); r.Outcome {
		case contracts.CheckUnmeasured:
			if problem == "" {
				problem = r.Problem
			}
		case contracts.CheckFail:
			failed = true
		}
	}
	switch {
	case problem != "":
		return contracts.StatusError, problem
	case failed:
		return contracts.StatusFail, ""
	}
	return contracts.StatusPass, ""
}

// jsonValue turns whatever a driver returned into plain JSON values (float64, string, bool,
// nil, []any, map[string]any), the types contracts.Compare understands.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
