package contracts

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// Wire versions of the verifier's evidence and the control worker's bundle.
const (
	EvidenceSchemaVersion = "signoff.evidence/v1"
	BundleSchemaVersion   = "signoff.bundle/v1"
)

// Criterion result statuses as the verifier reports them. The policy recomputes pass/fail and
// treats a disagreement as an integrity failure.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusError   = "error"
	StatusTimeout = "timeout"
)

// Evidence is what the verifier saw, signed with the verifier's ed25519 key. It carries
// digests of artifacts, never the artifacts themselves.
type Evidence struct {
	SchemaVersion string      `json:"schema_version"`
	ContractID    string      `json:"contract_id"`
	ContractHash  string      `json:"contract_hash"`
	Attempt       int         `json:"attempt"`
	Verifier      VerifierRef `json:"verifier"`
	ExpectedSHA   string      `json:"expected_sha"`
	RuntimeSHA    string      `json:"runtime_sha"`
	PreviewURL    string      `json:"preview_url"`
	// Variant names the lazy variant (VariantID) the page was altered by for a base check's
	// self-test. Such evidence measures Signoff's own edit, never the commit: the policy
	// refuses it as a verdict.
	Variant    string            `json:"variant,omitempty"`
	Browser    Browser           `json:"browser"`
	StartedAt  string            `json:"started_at"`
	FinishedAt string            `json:"finished_at"`
	Results    []CriterionResult `json:"results"`
	Artifacts  []Artifact        `json:"artifacts"`
	Signature  string            `json:"signature,omitempty"`
}

// Browser records where the evidence was gathered. The version is recorded, not hashed into
// the verifier digest, so a browser update does not stale every contract.
type Browser struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Mode    string `json:"mode"` // local or cdp
	// RecordingURL is a hosted browser's session recording (Browserbase keeps one); the JSON
	// name is the one signed evidence carries.
	RecordingURL string `json:"replay_url,omitempty"`
	// Sandbox says how the browser was confined: "chromium" (launched by the verifier as an
	// unprivileged user with Chromium's sandbox on), "none" (the same, sandbox off by the
	// operator's choice), "remote" (not launched by the verifier). Empty in evidence from
	// before it was recorded, and when no browser ran.
	Sandbox string `json:"sandbox,omitempty"`
}

// CriterionResult is one criterion as run. Observed holds every key ChecksFor names, plus
// context such as the elements that overflowed.
type CriterionResult struct {
	CriterionID   string         `json:"criterion_id"`
	Status        string         `json:"status"`
	Observed      map[string]any `json:"observed"`
	Error         string         `json:"error,omitempty"`
	DurationMS    int64          `json:"duration_ms"`
	Artifacts     []string       `json:"artifacts"`
	PageErrors    []string       `json:"page_errors"`
	ConsoleErrors []string       `json:"console_errors"`
	// Reads lists every reading of a browser criterion's assertion (semantics 3 on); the
	// criterion passes only if none failed, and Observed holds the deciding one's values.
	Reads []Read `json:"reads,omitempty"`
}

// Read is one reading of a browser criterion's assertion at one viewport.
type Read struct {
	Viewport string `json:"viewport"`
	// AtMS is the page's clock at the reading: ms since the document's time origin.
	AtMS int64 `json:"at_ms"`
	// Why is settled (the first, once the page went quiet), changed, periodic or final.
	Why string `json:"why"`
	// Failing lists the observed keys whose checks failed at this reading.
	Failing []string `json:"failing"`
	// Decides marks the reading whose values Observed holds: the first failing one, else
	// the last.
	Decides bool `json:"decides,omitempty"`
	// URL is the page's URL at the reading, as the browser driver knows it.
	URL string `json:"url,omitempty"`
}

// Artifact is a file in the proof store, addressed by its digest.
type Artifact struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"` // screenshot, trace, log
	Criterion string `json:"criterion,omitempty"`
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
}

// Verdicts.
const (
	Satisfied         = "satisfied"
	NotSatisfied      = "not_satisfied"
	VerificationError = "verification_error"
)

// Reason explains a verdict in terms of a machine value: the policy rule that
// decided, and for failed criteria the observed and expected values.
type Reason struct {
	Rule      int    `json:"rule"`
	Code      string `json:"code"`
	Criterion string `json:"criterion,omitempty"`
	Check     string `json:"check,omitempty"`
	Observed  any    `json:"observed,omitempty"`
	Expected  any    `json:"expected,omitempty"`
	Message   string `json:"message"`
}

// Bundle is the control worker's signed record of one attempt: the verdict and what it rests on.
type Bundle struct {
	SchemaVersion     string      `json:"schema_version"`
	ContractID        string      `json:"contract_id"`
	ContractHash      string      `json:"contract_hash"`
	Goal              string      `json:"goal"`
	Attempt           int         `json:"attempt"`
	Try               int         `json:"try"`
	BaseSHA           string      `json:"base_sha"`
	ImplementationSHA string      `json:"implementation_sha"`
	EvidenceDigest    string      `json:"evidence_digest"`
	Build             BuildResult `json:"build"`
	Gate              GateResult  `json:"gate"`
	Verdict           string      `json:"verdict"`
	Reasons           []Reason    `json:"reasons"`
	Timeline          []Event     `json:"timeline"`
	TimelineHead      string      `json:"timeline_head"`
	Payment           PaymentRef  `json:"payment"`
	PR                PRRef       `json:"pr"`
	Artifacts         []Artifact  `json:"artifacts"`
	// Base binds the base commit's check, when one ran and left its evidence in the
	// contract's base folder: the base screenshots a proof page shows beside the
	// implementation's are then covered by this signature, as the attempt's are. Optional;
	// bundles written before it was recorded, or without a base check, have none.
	Base      *BaseRef `json:"base,omitempty"`
	Signature string   `json:"signature,omitempty"`
}

// BaseRef is the base commit's check (attempt 0, <contract>/base/evidence.json) as a bundle
// binds it: that evidence's sha256. The evidence itself is signed by the verifier and lists
// the base screenshots and traces by digest.
type BaseRef struct {
	EvidenceDigest string `json:"evidence_digest"`
}

// BuildResult is the execute queue's account of building the attempt's commit.
type BuildResult struct {
	Passed bool        `json:"passed"`
	Steps  []BuildStep `json:"steps"`
	// Sandbox says how the repository's code ran: inside Signoff's sandbox, or not, when
	// the operator chose to run without one. Reviewers see it on the proof page.
	Sandbox string `json:"sandbox,omitempty"`
	// PackageManager is what installed, built and started the commit, by name and version
	// ("pnpm 9.15.9"): the release the repository declares, or Signoff's pinned one.
	PackageManager string `json:"package_manager,omitempty"`
	// ReusedBuild, on a re-verification of the same contract's commit, names the preview
	// whose build (these steps) the app was started from again instead of building anew.
	ReusedBuild string `json:"reused_build,omitempty"`
}

// BuildStep is one of install, build, lint, test.
type BuildStep struct {
	Name       string `json:"name"`
	Passed     bool   `json:"passed"`
	DurationMS int64  `json:"duration_ms"`
	Log        string `json:"log,omitempty"` // artifact name
	// Cause is the line of a failed step's log that shows why; Next what the requester can do.
	Cause string `json:"cause,omitempty"`
	Next  string `json:"next,omitempty"`
	// Errors is how many errors a failed check step's log counted (CountErrors), and
	// Preexisting that the preview went on past it because the contract records it as
	// failing on the base commit (Stack.Tolerates); the policy checks that again.
	Errors      int  `json:"errors,omitempty"`
	Preexisting bool `json:"preexisting,omitempty"`
}

// GateResult is the runtime gate: page errors always, an error tracker when configured.
type GateResult struct {
	Source string   `json:"source"`
	Errors []string `json:"errors"`
}

// PaymentRef binds a payment to the contract hash; it is never inside the hash.
type PaymentRef struct {
	Provider          string `json:"provider"`
	CheckoutSessionID string `json:"checkout_session_id,omitempty"`
	PaymentIntentID   string `json:"payment_intent_id,omitempty"`
	State             string `json:"state"`
	Local             bool   `json:"local"`
}

// PRRef is the deliverable: a pull request, or a branch on a local bare remote.
type PRRef struct {
	URL    string `json:"url,omitempty"`
	Number int    `json:"number,omitempty"`
	Branch string `json:"branch,omitempty"`
	Status string `json:"status,omitempty"`
}

// Signing domains keep a signature over evidence from being replayed as one over a bundle.
const (
	evidenceDomain = "signoff.evidence/v1\n"
	bundleDomain   = "signoff.bundle/v1\n"
)

// ErrBadSignature is returned when a signature is missing, malformed or does not verify.
var ErrBadSignature = errors.New("signature does not verify")

// SigningBytes is what the verifier signs: the domain and the canonical evidence without its
// signature.
func (e Evidence) SigningBytes() ([]byte, error) {
	e.Signature = ""
	return signingMessage(evidenceDomain, e)
}

// Sign sets the evidence signature.
func (e *Evidence) Sign(key ed25519.PrivateKey) (err error) {
	e.Signature, err = signWith(key, e.SigningBytes)
	return err
}

// VerifySignature checks the evidence signature against the verifier's public key.
func (e Evidence) VerifySignature(pub ed25519.PublicKey) error {
	return verifySig(pub, e.Signature, e.SigningBytes)
}

// SigningBytes is what the control worker signs.
func (b Bundle) SigningBytes() ([]byte, error) {
	b.Signature = ""
	return signingMessage(bundleDomain, b)
}

// Sign sets the bundle signature.
func (b *Bundle) Sign(key ed25519.PrivateKey) (err error) {
	b.Signature, err = signWith(key, b.SigningBytes)
	return err
}

// VerifySignature checks the bundle signature against the control worker's public key.
func (b Bundle) VerifySignature(pub ed25519.PublicKey) error {
	return verifySig(pub, b.Signature, b.SigningBytes)
}

// signingMessage is a signed document's message: its domain, then its canonical JSON (the
// caller has cleared the signature).
func signingMessage(domain string, unsigned any) ([]byte, error) {
	c, err := CanonicalJSON(unsigned)
	if err != nil {
		return nil, err
	}
	return append([]byte(domain), c...), nil
}

// signWith signs the message msgFn gives and returns the signature as a document carries it.
func signWith(key ed25519.PrivateKey, msgFn func() ([]byte, error)) (string, error) {
	msg, err := msgFn()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)), nil
}

func verifySig(pub ed25519.PublicKey, sig string, msgFn func() ([]byte, error)) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: public key has %d bytes, want %d", ErrBadSignature, len(pub), ed25519.PublicKeySize)
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is missing or malformed", ErrBadSignature)
	}
	msg, err := msgFn()
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, msg, raw) {
		return ErrBadSignature
	}
	return nil
}

// DigestBytes is the hex sha256 used for every digest in Signoff.
func DigestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// VerifierDigest binds a contract to verifier semantics: the in-page probe code, the assertion
// semantics version and the browser driver version. Not the whole binary, so a rebuild does
// not stale every contract; the browser version is recorded in evidence instead.
func VerifierDigest(probeCode []byte, driverVersion string) string {
	h := sha256.New()
	h.Write([]byte("signoff.verifier-digest/v1\n"))
	h.Write([]byte(DigestBytes(probeCode) + "\n"))
	h.Write([]byte(AssertionSemanticsVersion + "\n"))
	h.Write([]byte(driverVersion + "\n"))
	return hex.EncodeToString(h.Sum(nil))
}
