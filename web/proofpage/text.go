package proofpage

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/signoff/signoff/internal/proofstore"

	"github.com/signoff/signoff/contracts"
)

// summaries is the one template set for the short forms of a proof.
var summaries = template.Must(template.New("").Funcs(template.FuncMap{
	"md":    mdText,
	"code":  mdCode,
	"lower": strings.ToLower,
	"short": contracts.ShortSHA,
	"clip":  clip,
}).ParseFS(templateFS, "templates/*.tmpl"))

// summaryData is what the PR comment and the chat summary read: the same attempt view the
// HTML page shows.
type summaryData struct {
	ContractID  string
	Goal        string
	Hash        string
	MaxAttempts int
	Dir         string // relative to the data dir
	ProofURL    string
	A           *attemptView
	First       string // the first reason, for the chat summary
	More        int    // how many reasons follow it
	Signers     Signers
	// Sentence is the verdict sentence the page opens with; Lower is it for the middle of a line.
	Sentence, Lower string
	// Pictures are the page's first screen: per viewport, base and implementation, linked
	// to the page (only when the page has an http(s) address).
	Pictures []thumbRow
	PageLink string // the page's pictures section
}

// thumbRow is one viewport of the page's first screen, as absolute picture addresses.
type thumbRow struct {
	Label, Viewport, Criterion, Result string
	Base, BaseAlt, Impl, ImplAlt       string
}

// Signers name, by fingerprint (contracts.KeyFingerprint), the keys a deployment signs its
// proofs with, so a PR comment tells its readers which keys to check the proof against. An
// empty fingerprint is a key this worker cannot read; the comment says so.
type Signers struct {
	VerifierFingerprint string
	ControlFingerprint  string
}

func newSummary(a *Attempt, proofURL string, signers Signers) (*summaryData, error) {
	if a == nil || a.Bundle == nil {
		return nil, fmt.Errorf("proof summary: no readable bundle.json")
	}
	c := a.Contract
	// The folder as the proof store names it, not this machine's absolute path.
	dir := fmt.Sprintf("proofs/%s/attempt-%d/try-%d", a.Bundle.ContractID, a.Bundle.Attempt, a.Bundle.Try)
	d := &summaryData{ContractID: a.Bundle.ContractID, Goal: a.Bundle.Goal, Hash: a.Bundle.ContractHash, Dir: dir, ProofURL: proofURL,
		Signers: signers}
	if c != nil {
		d.MaxAttempts = c.MaxAttempts
	}
	// The page's own view of this attempt when it sits in a proof store (its base check and
	// earlier attempts), else the attempt alone.
	var lead *leadView
	if pv := pageViewOf(a); pv != nil {
		d.A, lead = pv.Latest, pv.Lead
		if d.MaxAttempts == 0 {
			d.MaxAttempts = pv.MaxAttempts
		}
	} else {
		alone := *a
		if alone.Rel == "." && a.Bundle.Attempt > 0 {
			alone.Rel = fmt.Sprintf("attempt-%d/try-%d", a.Bundle.Attempt, max(a.Bundle.Try, 1))
		}
		d.A = newAttemptView(&alone, c, nil, Links{})
		lead = newLead(d.A, d.MaxAttempts)
	}
	d.Sentence = lead.Sentence()
	d.Lower = strings.ToLower(lead.Word) + " " + lead.Rest
	if u, err := url.Parse(proofURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && strings.HasSuffix(u.Path, "/") {
		d.PageLink = proofURL + "#pictures"
		for _, p := range lead.Pairs {
			row := thumbRow{Label: p.Label, Viewport: p.Viewport, Criterion: p.Criterion, Result: p.Result}
			if p.Base != nil {
				row.Base, row.BaseAlt = proofURL+p.Base.Src, "base, "+p.Label+" "+p.Viewport
			}
			if p.Impl != nil {
				row.Impl, row.ImplAlt = proofURL+p.Impl.Src, "implementation, "+p.Label+" "+p.Viewport
			}
			d.Pictures = append(d.Pictures, row)
		}
	}
	if n := len(a.Bundle.Reasons); n > 0 {
		d.First, d.More = a.Bundle.Reasons[0].Message, n-1
	}
	return d, nil
}

// pageViewOf builds the proof page's view up to this attempt when the attempt's folder is
// <root>/<contract>/attempt-<n>/try-<m>; nil otherwise.
func pageViewOf(a *Attempt) *pageView {
	if a.Path == "" {
		return nil
	}
	an, tn, ok := proofstore.ParseTryDir(a.Path)
	if !ok {
		return nil
	}
	cdir := filepath.Dir(filepath.Dir(a.Path))
	p, err := Load(filepath.Dir(cdir), filepath.Base(cdir))
	if err != nil {
		return nil
	}
	for i, t := range p.Attempts {
		if t.Attempt == an && t.Try == tn && t.Bundle != nil && t.Bundle.ContractID == a.Bundle.ContractID {
			p.Attempts = p.Attempts[:i+1]
			return buildPageView(p, Links{})
		}
	}
	return nil
}

// PRComment renders the proof comment for the pull request (Markdown) from one verification
// folder: the page's verdict sentence and first-screen pictures, verdict, commits, change,
// payment, reasons and the criteria table. A folder in a proof store is read with its base
// check and earlier attempts, as the page reads it. proofURL, when
// set, links the proof page; signers are the fingerprints a reader checks it against.
func PRComment(a *Attempt, proofURL string, signers Signers) (string, error) {
	d, err := newSummary(a, proofURL, signers)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := summaries.ExecuteTemplate(&b, "pr_comment", d); err != nil {
		return "", fmt.Errorf("proof summary: %w", err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// ChatSummary renders the short plain-text message for chat: the verdict, the count of
// criteria passed, the first reason, the payment state and the proof link, on one line.
func ChatSummary(a *Attempt, proofURL string) (string, error) {
	d, err := newSummary(a, proofURL, Signers{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := summaries.ExecuteTemplate(&b, "chat_summary", d); err != nil {
		return "", fmt.Errorf("proof summary: %w", err)
	}
	return strings.Join(strings.Fields(b.String()), " "), nil
}

// ChatSummaryOf is ChatSummary for a bundle alone (the control worker has it in hand): no
// criteria count, the rest as ChatSummary.
func ChatSummaryOf(b contracts.Bundle, proofURL string) (string, error) {
	return ChatSummary(&Attempt{Bundle: &b}, proofURL)
}

// PRCommentOf is PRComment for a bundle and, when at hand, its contract and evidence.
func PRCommentOf(b contracts.Bundle, c *contracts.Contract, ev *contracts.Evidence, proofURL string, signers Signers) (string, error) {
	a := &Attempt{Bundle: &b, Contract: c, Evidence: ev}
	a.Rel, a.Attempt, a.Try = ".", b.Attempt, b.Try
	return PRComment(a, proofURL, signers)
}

// mdText escapes text for a Markdown table cell or list item.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#', '!', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode puts s in a code span that no backtick inside can close; pipes are escaped for
// tables (GitHub honours \| inside code spans in tables).
func mdCode(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ", "|", `\|`).Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// LocalPaymentLabel marks payments made against a local stand-in (the Stripe test double):
// nothing on the page may suggest money moved.
const LocalPaymentLabel = "local test mode: no money moves"
