package workflows

import (
	"time"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/authoring"
)

// ContractInput starts a contract workflow: the quote, who may approve it, and what the
// workflow trusts independently of the verifier.
type ContractInput struct {
	Quote    contracts.Quote `json:"quote"`
	Channel  string          `json:"channel"`
	Trust    Trust           `json:"trust"`
	Timeouts Timeouts        `json:"timeouts"`
	// ReverifyLimit bounds re-verifications of one commit before pausing for an operator.
	ReverifyLimit int `json:"reverify_limit"`
	// Discrimination is the criteria's result on the base commit, checked before the quote
	// was offered; the workflow records it so the approver's view is part of the timeline.
	Discrimination *Discrimination `json:"discrimination,omitempty"`
	// QuoteExpiresAt, when set, is when the quote stops being open: an approval must arrive
	// before it (and before Timeouts.Approval, whichever is sooner), or the contract expires.
	QuoteExpiresAt time.Time `json:"quote_expires_at,omitzero"`
}

// Discrimination says which criteria fail on the base commit (the change must fix them) and
// which already pass there (regression guards).
type Discrimination struct {
	BaseSHA string   `json:"base_sha"`
	Failing []string `json:"failing"`
	Guards  []string `json:"guards"`
	// Where says what ran the check: "queues" (execute and verify workers) or "local".
	Where string `json:"where,omitempty"`
	// ProofDir holds the check's signed evidence, screenshots and traces.
	ProofDir string `json:"proof_dir,omitempty"`
}

// DiscriminationOf is what the workflow records of an authoring base check; nil when no
// check ran.
func DiscriminationOf(d *authoring.Discrimination) *Discrimination {
	if d == nil || !d.Checked || d.Report == nil {
		return nil
	}
	return &Discrimination{BaseSHA: d.Report.CommitSHA, Failing: d.Failing, Guards: d.Guards, Where: d.Report.Where, ProofDir: d.Report.ProofDir}
}

// Trust is what the policy checks evidence against: the verifier's public key and the
// verifier digest this deployment runs.
type Trust struct {
	VerifierPublicKey []byte `json:"verifier_public_key"`
	VerifierDigest    string `json:"verifier_digest"`
}

// Timeouts bound every wait on a person or a provider. Zero means the default.
type Timeouts struct {
	Approval    time.Duration `json:"approval"`
	Payment     time.Duration `json:"payment"`
	PaymentPoll time.Duration `json:"payment_poll"`
	Operator    time.Duration `json:"operator"`
	// WatchPR keeps watching the PR head after a satisfied verdict; zero ends the workflow
	// once payment is settled.
	WatchPR time.Duration `json:"watch_pr"`
	// ControlActivity bounds one control activity (default 2 m) and Heartbeat the silence
	// after which a long activity's worker counts as lost (default 1 m). Tests that kill
	// workers shorten both.
	ControlActivity time.Duration `json:"control_activity"`
	Heartbeat       time.Duration `json:"heartbeat"`
}

// Defaults for zero timeouts.
const (
	DefaultApprovalTimeout = 72 * time.Hour
	DefaultPaymentTimeout  = 24 * time.Hour
	DefaultPaymentPoll     = 30 * time.Second
	DefaultOperatorTimeout = 24 * time.Hour
	DefaultReverifyLimit   = 1
	lockLease              = 7 * 24 * time.Hour
)

func (t Timeouts) withDefaults() Timeouts {
	if t.Approval <= 0 {
		t.Approval = DefaultApprovalTimeout
	}
	if t.Payment <= 0 {
		t.Payment = DefaultPaymentTimeout
	}
	if t.PaymentPoll <= 0 {
		t.PaymentPoll = DefaultPaymentPoll
	}
	if t.Operator <= 0 {
		t.Operator = DefaultOperatorTimeout
	}
	if t.ControlActivity <= 0 {
		t.ControlActivity = 2 * time.Minute
	}
	if t.Heartbeat <= 0 {
		t.Heartbeat = time.Minute
	}
	return t
}

// Approve is the approval signal: the hash the approver was shown, who, where, which message.
type Approve = contracts.Approval

// Cancel is the cancel signal.
type Cancel struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// PaymentAuthorized tells the workflow the checkout completed (a webhook, or the local CLI).
// The workflow confirms with the provider before it acts.
type PaymentAuthorized struct {
	SessionID       string `json:"checkout_session_id"`
	PaymentIntentID string `json:"payment_intent_id"`
	Source          string `json:"source"`
}

// PRHeadChanged reports a new head on the contract's PR.
type PRHeadChanged struct {
	SHA    string `json:"sha"`
	Source string `json:"source"`
}

// Operator is the retry_verification or abandon signal.
type Operator struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// AttemptRecord is one verification of one attempt's commit.
type AttemptRecord struct {
	Attempt        int                `json:"attempt"`
	Try            int                `json:"try"`
	CommitSHA      string             `json:"commit_sha"`
	Verdict        string             `json:"verdict"`
	Reasons        []contracts.Reason `json:"reasons"`
	EvidenceDigest string             `json:"evidence_digest,omitempty"`
	BundleDigest   string             `json:"bundle_digest,omitempty"`
	ProofDir       string             `json:"proof_dir,omitempty"`
	DiffSummary    string             `json:"diff_summary,omitempty"`
}

// Status is the status query's answer and the workflow's result.
type Status struct {
	ContractID   string `json:"contract_id"`
	ContractHash string `json:"contract_hash"`
	Goal         string `json:"goal"`
	Repo         string `json:"repo"`
	Requester    string `json:"requester"`
	// QuoteExpiresAt is when the quote stops being open for approval (zero: Timeouts.Approval
	// after it was quoted).
	QuoteExpiresAt time.Time               `json:"quote_expires_at,omitzero"`
	State          string                  `json:"state"`
	Phase          string                  `json:"phase"`
	Attempt        int                     `json:"attempt"`
	MaxAttempts    int                     `json:"max_attempts"`
	Executions     int                     `json:"executions"`
	Verdict        string                  `json:"verdict,omitempty"`
	Attempts       []AttemptRecord         `json:"attempts"`
	Payment        activities.PaymentState `json:"payment"`
	PR             contracts.PRRef         `json:"pr"`
	MergeEligible  bool                    `json:"merge_eligible"`
	Refusals       []string                `json:"refusals"`
	// StrangerRefusals counts approvals refused because the approver was not the requester.
	// Only the first is recorded in Refusals and the timeline; the rest are counted here, so
	// a stranger cannot grow another's signed timeline without bound.
	StrangerRefusals int               `json:"stranger_refusals,omitempty"`
	Timeline         []contracts.Event `json:"timeline"`
	Final            bool              `json:"final"`
}

// Proof is the proof query's answer: where the bundles are and what they say.
type Proof struct {
	ContractHash string          `json:"contract_hash"`
	Verdict      string          `json:"verdict,omitempty"`
	TimelineHead string          `json:"timeline_head"`
	Attempts     []AttemptRecord `json:"attempts"`
}
