package proofpage

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore"
)

// Links says where the page's links go. The zero value suits a static render: every file is
// linked relative to the contract page, traces as raw zip files.
type Links struct {
	// TraceViewer is the URL path of the trace viewer's index.html; empty: raw trace links.
	TraceViewer string
	// Origin (scheme://host:port) and FileBase (the contract folder's URL path, ending in "/")
	// make the absolute trace URL the viewer fetches.
	Origin   string
	FileBase string
	// Index is the URL of the proof list; empty: no link.
	Index string
}

// pageView is what the HTML template reads. Display strings are computed here so that the
// template, the PR comment and the chat summary say the same thing.
type pageView struct {
	Title       string
	Slug        string
	Goal        string
	ContractID  string
	Hash        string
	Repo        string
	Price       string
	MaxAttempts int
	Criteria    int
	Latest      *attemptView
	Attempts    []*attemptView
	Newest      []*attemptView // Attempts, latest first
	Lead        *leadView
	// VerifyFailed: the page was verified and some check failed; the headline says so.
	VerifyFailed bool
	// Base is the base check as a bundle binds it, shown with the records.
	Base       *baseView
	Timeline   []eventView
	Head       string
	Verified   *verifyView
	VerifyNote string
	// Trusted is true only when the page was verified with the reader's keys and every check
	// held; anything else heads the page "unverified".
	Trusted    bool
	TrustNote  string
	VerifierFP string
	ControlFP  string
	Status     *statusView
	Settlement *settlementView
	Links      Links
	NoContract bool
}

// settlementView is the signed settlement: how the contract ended and what became of the
// payment, with whether this page's verification checked its signature.
type settlementView struct {
	State   string
	Payment paymentView
	Checked string // "verified", "failed" or "" (not verified here)
}

// baseView is the base commit's check: its evidence's digest and whether the latest bundle
// binds it.
type baseView struct {
	Digest, Bound, Commit string
	BoundOK               bool
	Shots                 int
}

type statusView struct {
	State, Verdict, UpdatedAt, WorkflowID string
	Attempts                              int
}

type verifyView struct {
	OK       bool
	Total    int
	Failed   []proofstore.Check
	Sections []verifySection
}

type verifySection struct {
	Title     string
	OK        bool
	Rederived string
	Checks    []proofstore.Check
}

type attemptView struct {
	Anchor      string
	Attempt     int
	Try         int
	Rel         string
	Problems    []string
	HasBundle   bool
	B           bundleFields
	E           *evidenceFields
	Verdict     string
	VerdictWord string
	VerdictCSS  string
	Summary     string
	Reasons     []reasonView
	Rows        []rowView
	Unknown     []resultView // results for criteria the contract does not have
	Passed      int
	Total       int
	Pairs       []pairView // screenshots, base against implementation
	Traces      []traceView
	// Verified: the verifier ran and its evidence is here (Passed and Total count only then).
	Verified bool
	// Unchanged: the executor changed nothing in this attempt, so nothing was re-verified.
	Unchanged bool
	// Stands is the earlier attempt whose results stand when this one changed nothing.
	Stands      *attemptView
	Files       []fileView
	EvFiles     []fileView // the evidence's list, shown when it differs from the bundle's
	Diff        string
	DiffEvent   int
	Payment     paymentView
	PR          prView
	OwnTimeline []eventView // shown only when it is not a prefix of the page's timeline
	HeadSeq     int         // the timeline_head's event in the page's timeline (0: not found)
	GoalDiffers bool
	Signature   string
}

// bundleFields are the bundle's plain values.
type bundleFields struct {
	SchemaVersion, ContractID, ContractHash, Goal, BaseSHA, ImplementationSHA string
	EvidenceDigest, TimelineHead                                              string
	BaseEvidence                                                              string // the base check's evidence digest the bundle binds
	Attempt, Try                                                              int
	BuildPassed                                                               bool
	Steps                                                                     []stepView
	// Sandbox is how the repository's code ran; Unsandboxed flags the operator's opt-out.
	Sandbox     string
	Unsandboxed bool
	// ReusedBuild is the preview whose build a re-verification started the app from.
	ReusedBuild string
	GateSource  string
	GateErrors  []string
}

type stepView struct {
	Name   string
	Passed bool
	// Preexisting: a check that failed and that the contract records as failing on the base
	// commit too (Errors counted in its log).
	Preexisting bool
	Errors      int
	DurationMS  int64
	Log         string // the log's file name: never the path on the worker that built it
	LogHref     string // set when the proof holds a file of that name
}

type evidenceFields struct {
	SchemaVersion, ContractID, ContractHash     string
	Attempt                                     int
	VerifierName, VerifierVersion, VerifierID   string
	ExpectedSHA, RuntimeSHA, PreviewURL         string
	Browser, BrowserVersion, Mode, RecordingURL string
	RecordingLink                               string // RecordingURL when it is http(s)
	StartedAt, FinishedAt                       string
	Signature                                   string
}

type reasonView struct {
	Rule      int
	Code      string
	Criterion string
	Check     string
	Observed  string
	Expected  string
	HasValues bool
	Message   string
}

type rowView struct {
	N           int
	ID          string
	Description string
	Route       string
	Viewports   string
	Checks      []checkView
	Result      string
	ResultCSS   string
	Reported    string // the verifier's status
	Error       string
	Other       []kv // observed values no check reads (context such as offending elements)
	HasResult   bool
	DurationMS  int64
	Artifacts   []string
	PageErrors  []string
	ConsoleErrs []string
	Failures    []string   // the policy's messages for this criterion
	Trace       *traceView // the criterion's (first) trace, one click from its row
}

type resultView struct {
	ID          string
	Status      string
	Error       string
	Observed    []kv
	DurationMS  int64
	Artifacts   []string
	PageErrors  []string
	ConsoleErrs []string
}

type checkView struct {
	Key      string
	Ref      bool // compared with another observed value, not a literal
	Label    string
	Viewport string
	Expected string
	Observed string
	Result   string
	CSS      string
}

type kv struct{ K, V string }

type traceView struct {
	Criterion string
	Name      string
	Raw       string
	Viewer    string // "" in a static render
}

type fileView struct {
	Name, Kind, Criterion, SHA256 string
	Size                          int64
	Href                          string
}

type paymentView struct {
	Provider, State, Session, Intent string
	Local                            bool
	LocalLabel                       string
}

type prView struct {
	URL, Link, Branch, Status string
	Number                    int
}

type eventView struct {
	Seq      int
	Type     string
	At       string
	Data     []kv
	PrevHash string
	Hash     string
}

// verdictWord is the verdict for people; an unknown value is shown as it is.
func verdictWord(v string) string {
	switch v {
	case contracts.Satisfied:
		return "Satisfied"
	case contracts.NotSatisfied:
		return "Not satisfied"
	case contracts.VerificationError:
		return "Verification error"
	case "":
		return "No verdict"
	}
	return v
}

func verdictCSS(v string) string {
	switch v {
	case contracts.Satisfied:
		return "ok"
	case contracts.NotSatisfied:
		return "bad"
	}
	return "warn"
}

func buildPageView(p *Page, links Links) *pageView {
	v := &pageView{Slug: p.Slug, Links: links, VerifyNote: p.VerifyNote}
	c := p.Contract
	if c != nil {
		v.Goal, v.ContractID, v.MaxAttempts, v.Criteria = c.Goal, c.ContractID, c.MaxAttempts, len(c.Criteria)
		v.Repo = fmt.Sprintf("%s at %s", c.Repo.Key(), c.Repo.BaseCommitSHA)
		v.Price = c.Price.String()
		if h, err := contracts.Hash(*c); err == nil {
			v.Hash = h
		}
	} else {
		v.NoContract = true
	}
	// The page's timeline is the longest one: the latest bundle's, normally.
	var timeline []contracts.Event
	for _, a := range p.Attempts {
		if a.Bundle != nil && len(a.Bundle.Timeline) >= len(timeline) {
			timeline = a.Bundle.Timeline
		}
	}
	// A signed settlement extends the last bundle's timeline to the payment's end.
	if st := p.Settlement; st != nil && isPrefix(timeline, st.Timeline) {
		timeline = st.Timeline
	}
	for _, e := range timeline {
		v.Timeline = append(v.Timeline, eventOf(e))
	}
	if n := len(timeline); n > 0 {
		v.Head = timeline[n-1].Hash
	}
	base, bv := baseOf(p)
	v.Base = bv
	for _, a := range p.Attempts {
		av := newAttemptView(a, c, base, links)
		if a.Bundle != nil {
			if isPrefix(a.Bundle.Timeline, timeline) {
				av.HeadSeq = headSeq(a.Bundle.TimelineHead, timeline)
			} else {
				for _, e := range a.Bundle.Timeline {
					av.OwnTimeline = append(av.OwnTimeline, eventOf(e))
				}
			}
			av.GoalDiffers = c == nil || a.Bundle.Goal != c.Goal
		}
		v.Attempts = append(v.Attempts, av)
	}
	v.Latest = v.Attempts[len(v.Attempts)-1]
	for i := len(v.Attempts) - 1; i >= 0; i-- {
		v.Newest = append(v.Newest, v.Attempts[i])
	}
	for i, av := range v.Attempts {
		for j := i - 1; av.Unchanged && j >= 0 && av.Stands == nil; j-- {
			if v.Attempts[j].Verified && v.Attempts[j].Attempt < av.Attempt {
				av.Stands = v.Attempts[j]
			}
		}
	}
	v.Lead = newLead(v.Latest, v.MaxAttempts)
	if v.Goal == "" && v.Latest.HasBundle {
		v.Goal = v.Latest.B.Goal
	}
	if v.ContractID == "" {
		v.ContractID = v.Latest.B.ContractID
	}
	v.Title = v.ContractID
	if p.Verified != nil {
		v.Verified = newVerifyView(p.Verified)
		v.VerifierFP, v.ControlFP = p.VerifierFingerprint, p.ControlFingerprint
	}
	switch {
	case v.Verified == nil:
		v.TrustNote = "not checked with the reader's keys: the verdict below is only what the bundle claims"
	case !v.Verified.OK:
		v.VerifyFailed = true
		v.TrustNote = fmt.Sprintf("%d of %d checks failed: the verdict below is only what the bundle claims", len(v.Verified.Failed), v.Verified.Total)
	default:
		v.Trusted = true
	}
	switch {
	case v.VerifyFailed:
		v.Title += " (fails verification)"
	case !v.Trusted:
		v.Title += " (unverified)"
	}
	if st := p.Settlement; st != nil {
		sv := &settlementView{State: st.State, Payment: paymentView{Provider: st.Payment.Provider, State: st.Payment.State,
			Session: st.Payment.CheckoutSessionID, Intent: st.Payment.PaymentIntentID, Local: st.Payment.Local}}
		if st.Payment.Local {
			sv.Payment.LocalLabel = LocalPaymentLabel
		}
		if p.Verified != nil {
			sv.Checked = "verified"
			for _, ch := range p.Verified.Checks {
				if (ch.Name == proofstore.CheckSettlement || ch.Name == proofstore.CheckSettlementSig) && !ch.OK {
					sv.Checked = "failed"
				}
			}
		}
		v.Settlement = sv
	}
	if s := p.Status; s != nil {
		v.Status = &statusView{State: s.State, Verdict: s.Verdict, UpdatedAt: s.UpdatedAt, WorkflowID: s.WorkflowID, Attempts: s.Attempts}
	}
	return v
}

// baseOf is the base commit's screenshots as the attempts pair them, and what covers them.
func baseOf(p *Page) (*baseShots, *baseView) {
	var bv *baseView
	var bound string
	if l := p.Latest(); l != nil && l.Bundle != nil && l.Bundle.Base != nil {
		bound = l.Bundle.Base.EvidenceDigest
	}
	if p.BaseEvidence != nil || bound != "" {
		bv = &baseView{Digest: p.BaseDigest, Bound: bound, BoundOK: bound != "" && bound == p.BaseDigest, Shots: len(p.BaseShots)}
		if p.BaseEvidence != nil {
			bv.Commit = p.BaseEvidence.ExpectedSHA
		}
	}
	if len(p.BaseShots) == 0 {
		return nil, bv
	}
	b := &baseShots{dir: filepath.Join(p.Dir, proofstore.BaseDir), files: p.BaseShots, results: map[string]*contracts.CriterionResult{}}
	if p.Contract != nil {
		b.commit = contracts.ShortSHA(p.Contract.Repo.BaseCommitSHA)
	}
	switch {
	case p.BaseEvidence == nil:
		b.note = "unsigned: the base folder holds no evidence"
	case bv.BoundOK:
		b.note = "signed by the verifier, bound by the bundle"
	default:
		b.note = "signed by the verifier, bound by no bundle"
	}
	if ev := p.BaseEvidence; ev != nil {
		for i := range ev.Results {
			if _, dup := b.results[ev.Results[i].CriterionID]; !dup {
				b.results[ev.Results[i].CriterionID] = &ev.Results[i]
			}
		}
	}
	return b, bv
}

func newVerifyView(cr *proofstore.ContractReport) *verifyView {
	vv := &verifyView{OK: cr.OK}
	for _, t := range cr.Tries {
		title := fmt.Sprintf("attempt %d, try %d", t.Attempt, t.Try)
		if t.Attempt == 0 {
			title = "this folder"
		}
		vv.Sections = append(vv.Sections, verifySection{Title: title, OK: t.OK, Rederived: t.Rederived, Checks: t.Checks})
		vv.Total += len(t.Checks)
		vv.Failed = append(vv.Failed, t.Failed()...)
	}
	if len(cr.Checks) > 0 {
		ok := true
		for _, c := range cr.Checks {
			ok = ok && c.OK
			if !c.OK {
				vv.Failed = append(vv.Failed, c)
			}
		}
		vv.Sections = append(vv.Sections, verifySection{Title: "across attempts", OK: ok, Checks: cr.Checks})
		vv.Total += len(cr.Checks)
	}
	return vv
}

func eventOf(e contracts.Event) eventView {
	ev := eventView{Seq: e.Seq, Type: e.Type, At: e.At, PrevHash: e.PrevHash, Hash: e.Hash}
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ev.Data = append(ev.Data, kv{k, shownPath(e.Data[k])})
	}
	return ev
}

// logName is a build log as the page names it: its file name, never the path on the worker.
func logName(p string) string {
	if p == "" {
		return ""
	}
	return path.Base(strings.ReplaceAll(p, "\\", "/"))
}

// shownPath keeps the paths of the machine that made the proof off the page: an absolute
// path, or a file: URL, is shown by its last element (and a URL's fragment, the branch).
func shownPath(s string) string {
	rest, isURL := strings.CutPrefix(s, "file://")
	if !isURL && (!strings.HasPrefix(s, "/") || strings.Count(s, "/") < 2 || strings.ContainsAny(s, " \n\t")) {
		return s
	}
	frag := ""
	if i := strings.IndexByte(rest, '#'); isURL && i >= 0 {
		rest, frag = rest[:i], rest[i:]
	}
	rest = strings.TrimRight(rest, "/")
	if rest == "" {
		return s
	}
	out := "…/" + path.Base(rest) + frag
	if isURL {
		out = "file://" + out
	}
	return out
}

func isPrefix(a, b []contracts.Event) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i].Hash != b[i].Hash || a[i].Seq != b[i].Seq || a[i].Type != b[i].Type || a[i].At != b[i].At ||
			a[i].PrevHash != b[i].PrevHash || !sameData(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func sameData(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func headSeq(head string, events []contracts.Event) int {
	for _, e := range events {
		if e.Hash == head {
			return e.Seq
		}
	}
	return 0
}

func join(rel, name string) string {
	if rel == "" || rel == "." {
		return name
	}
	return rel + "/" + name
}

// viewportOf returns "390×844" for a key prefixed with a viewport.
func viewportOf(key string) string {
	vp, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	return strings.Replace(vp, "x", "×", 1)
}

// display drops the viewport prefix of an observed key.
func display(key string) string {
	if i := strings.Index(key, "/"); i >= 0 {
		return key[i+1:]
	}
	return key
}
