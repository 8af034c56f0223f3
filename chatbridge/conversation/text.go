package conversation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Everything a person reads in chat is written here and in notify.go. Money words are
// authorize, capture and cancel authorization only: a wording test in conversation_test.go
// scans this package's files for the two words a held payment is often misnamed with.

func helpText(runNames, repos []string) string {
	var b strings.Builder
	b.WriteString("Signoff turns a change request into a fixed-price contract of browser-checked criteria, has it implemented, " +
		"verifies the delivered commit in a real browser, and captures the authorized payment only if every criterion passes.\n\n")
	b.WriteString("Say:\n")
	b.WriteString("- a change, e.g. \"make the Watchlist page work well on mobile\"")
	if len(repos) > 0 {
		fmt.Fprintf(&b, " (repository %s", repos[0])
		if len(repos) > 1 {
			fmt.Fprintf(&b, "; name another with \"repo owner/name\": %s", strings.Join(repos[1:], ", "))
		}
		b.WriteString(")")
	}
	b.WriteString(": a survey and a quoted contract with its hash\n")
	if len(runNames) > 0 {
		fmt.Fprintf(&b, "- run W1: quote a prepared run (%s; \"list\" describes them)\n", strings.Join(runNames, ", "))
	}
	b.WriteString("- approve <hash>: accept exactly that contract (only its requester may)\n")
	b.WriteString("- pay: complete the local checkout (local mode, no money moves)\n")
	b.WriteString("- status [contract id or run]: where any contract stands\n")
	b.WriteString("- cancel: cancel your contract (an authorization is cancelled, never captured)\n")
	b.WriteString("- retry / abandon: answer a paused verification")
	return b.String()
}

// quoteFailedText is what the requester reads when drafting failed for reasons of ours: no
// internal error text reaches the chat.
const quoteFailedText = "I could not prepare a quote for that request: surveying the repository or checking its base commit kept failing on this Signoff. Nothing was started and nothing is owed. Please send the request again in a few minutes."

// quoteText is the quote: terms, criteria, price, hash and how to approve.
func (cv *Conversation) quoteText(c contracts.Contract, hash string, q *pricing.Estimate, baseCheck, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Quoted contract %s for %s @ %s\n", c.ContractID, c.Repo.Key(), contracts.ShortSHA(c.Repo.BaseCommitSHA))
	fmt.Fprintf(&b, "Goal: %s\n", c.Goal)
	fmt.Fprintf(&b, "Criteria (%d), all checked in a real browser on the delivered commit:\n", len(c.Criteria))
	for i, cr := range c.Criteria {
		fmt.Fprintf(&b, "%d. %s (%s): %s\n", i+1, cr.ID, where(cr), cr.Description)
	}
	price := c.Price.String() + " fixed"
	if q != nil && q.EstimatedMinutes > 0 {
		price += fmt.Sprintf(" (about %d min of work)", q.EstimatedMinutes)
	}
	fmt.Fprintf(&b, "Price: %s. It is authorized after you approve and captured only if every criterion passes; otherwise the authorization is cancelled. At most %d attempts.\n",
		price, c.MaxAttempts)
	if baseCheck != "" {
		b.WriteString(baseCheck + "\n")
	}
	if words := c.Stack.PreviewEnvWords(""); len(words) > 0 || len(c.Stack.Services) > 0 {
		b.WriteString("Previews run the app")
		if len(words) > 0 {
			b.WriteString(" with " + strings.Join(words, ", "))
		}
		if slices.Contains(c.Stack.Services, contracts.ServicePostgres) {
			b.WriteString(" and a throwaway PostgreSQL of their own")
		}
		b.WriteString(" (nothing secret: the values are part of the terms).\n")
	}
	for _, p := range c.Stack.Preexisting {
		fmt.Fprintf(&b, "Already failing: %s. Not part of the goal: it does not count against the change, which must fail %s no worse.\n", p, p.Step)
	}
	if note != "" {
		b.WriteString("Note: " + note + "\n")
	}
	if q != nil && !q.ExpiresAt.IsZero() {
		fmt.Fprintf(&b, "This quote stands until %s; unapproved by then, it expires.\n", q.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	if k := cv.cfg.Keys; k.Verifier != "" && k.Control != "" {
		fmt.Fprintf(&b, "Proofs are signed with verifier key %s and control key %s; compare them with `signoff keys` on the server", k.Verifier, k.Control)
		if cv.cfg.ReadmeURL != "" {
			fmt.Fprintf(&b, " or the agent README (%s)", cv.cfg.ReadmeURL)
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "Contract hash: %s\n", hash)
	fmt.Fprintf(&b, "To accept exactly this contract, reply: approve %s", hash)
	return b.String()
}

func where(cr contracts.Criterion) string {
	vps := cr.Viewports()
	if len(vps) == 0 {
		return cr.Route + ", http"
	}
	var ns []string
	for _, v := range vps {
		ns = append(ns, fmt.Sprintf("%dx%d", v.Width, v.Height))
	}
	return cr.Route + " at " + strings.Join(ns, " and ")
}

// statusText renders the status query's answer.
func statusText(st contractapi.Status, proofURL, label string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", st.ContractID, stateWords(st))
	fmt.Fprintf(&b, "Goal: %s\nRepository: %s\nHash: %s\n", st.Goal, st.Repo, st.ContractHash)
	if st.Payment.State != "" {
		fmt.Fprintf(&b, "Payment: %s\n", paymentWords(st.Payment, label))
	}
	for _, a := range st.Attempts {
		fmt.Fprintf(&b, "Attempt %d", a.Attempt)
		if a.Try > 1 {
			fmt.Fprintf(&b, " (verification %d)", a.Try)
		}
		if a.CommitSHA != "" {
			fmt.Fprintf(&b, ", commit %s", contracts.ShortSHA(a.CommitSHA))
		}
		fmt.Fprintf(&b, ": %s", verdictWords(a.Verdict))
		if len(a.Reasons) > 0 {
			fmt.Fprintf(&b, ". %s", a.Reasons[0].Message)
			if len(a.Reasons) > 1 {
				fmt.Fprintf(&b, " (+%d more)", len(a.Reasons)-1)
			}
		}
		b.WriteString("\n")
	}
	if st.PR.URL != "" {
		fmt.Fprintf(&b, "Deliverable: %s (merge eligible: %s)\n", st.PR.URL, yesNo(st.MergeEligible))
	}
	if n := len(st.Refusals); n > 0 {
		fmt.Fprintf(&b, "Refused approvals: %d (last: %s)\n", n, st.Refusals[n-1])
	}
	if proofURL != "" && len(st.Attempts) > 0 {
		fmt.Fprintf(&b, "Proof: %s\n", proofURL)
	}
	if st.State == contracts.StateQuoted {
		fmt.Fprintf(&b, "Open for approval by its requester: approve %s\n", st.ContractHash)
	}
	return strings.TrimRight(b.String(), "\n")
}

// indexText answers status from the contract index once history is gone.
func indexText(e capability.IndexEntry, proofURL string) string {
	s := fmt.Sprintf("%s: %s (from the contract index; the workflow history is no longer kept)\nGoal: %s\nRepository: %s\nHash: %s",
		e.ContractID, strings.ReplaceAll(e.State, "_", " "), e.Goal, e.Repo, e.ContractHash)
	if e.Verdict != "" {
		s += fmt.Sprintf("\nVerdict: %s after %d attempt(s)", verdictWords(e.Verdict), e.Attempts)
	}
	if e.PR != "" {
		s += "\nDeliverable: " + e.PR
	}
	if proofURL != "" && e.ProofDir != "" {
		s += "\nProof: " + proofURL
	}
	return s
}

// stateWords says where a contract stands in a few words.
func stateWords(st contractapi.Status) string {
	attempt := ""
	if st.Attempt > 0 {
		attempt = fmt.Sprintf(", attempt %d of %d", st.Attempt, st.MaxAttempts)
	}
	switch st.State {
	case contracts.StateQuoted:
		return "quoted, waiting for approval"
	case contracts.StateApproved:
		return "approved, waiting for the payment authorization"
	case contracts.StateAuthorized:
		return "payment authorized, waiting for the repository"
	case contracts.StateBuilding, contracts.StateRepairing:
		phase := st.Phase
		if phase == "" {
			phase = "executor working"
		}
		return phase + attempt
	case contracts.StateVerifying:
		return "verifying in a real browser" + attempt
	case contracts.StateAwaitingOperator:
		return "verification paused: say retry or abandon" + attempt
	case contracts.StatePaymentCaptured, contracts.StateMergeEligible:
		s := "satisfied, payment captured"
		if st.MergeEligible {
			s += ", merge eligible"
		}
		return s
	case contracts.StatePaymentCancelled:
		return verdictWords(st.Verdict) + ", authorization cancelled (nothing captured)"
	case contracts.StateCancelled:
		return "cancelled (nothing captured)"
	case contracts.StateExpired:
		if !st.QuoteExpiresAt.IsZero() {
			return "the quote expired without approval at " + st.QuoteExpiresAt.UTC().Format("2006-01-02 15:04 MST")
		}
		return "quote expired without approval"
	case contracts.StateSatisfied, contracts.StateNotSatisfied, contracts.StateVerificationError:
		return verdictWords(st.Verdict) + attempt
	}
	return strings.ReplaceAll(st.State, "_", " ") + attempt
}

func verdictWords(v string) string {
	switch v {
	case contracts.Satisfied:
		return "satisfied"
	case contracts.NotSatisfied:
		return "not satisfied"
	case contracts.VerificationError:
		return "verification error"
	case "":
		return "no verdict"
	}
	return v
}

// paymentWords describes a payment state; a local payment (the Stripe test double's) always
// says it moves no money.
func paymentWords(p capability.PaymentState, label string) string {
	var s string
	switch p.State {
	case capability.PaymentPending:
		s = "checkout open, not authorized yet"
	case capability.PaymentAuthorized:
		s = "authorized, not captured"
	case capability.PaymentCaptured:
		s = "captured"
	case capability.PaymentCanceled:
		s = "authorization cancelled, nothing captured"
	case capability.PaymentExpired:
		s = "checkout expired, nothing authorized"
	default:
		s = p.State
	}
	if p.Local {
		s += " (" + label + ")"
	} else if p.Provider != "" {
		s += " via " + p.Provider
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
