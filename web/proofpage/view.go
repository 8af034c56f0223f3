package proofpage

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/signoff/signoff/activities/proofstore"
	"github.com/signoff/signoff/contracts"
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
	GateSource  string
	GateErrors  []string
}

type stepView struct {
	Name       string
	Passed     bool
	DurationMS int64
	Log        string // the log's file name: never the path on the worker that built it
	LogHref    string // set when the proof holds a file of that name
}

type evidenceFields struct {
	SchemaVersion, ContractID, ContractHash   string
	Attempt                                   int
	VerifierName, VerifierVersion, VerifierID string
	ExpectedSHA, RuntimeSHA, PreviewURL       string
	Browser, BrowserVersion, Mode, ReplayURL  string
	ReplayLink                                string // ReplayURL when it is http(s)
	StartedAt, FinishedAt                     string
	Signature                                 string
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
		v.Repo = fmt.Sprintf("%s/%s at %s", c.Repo.Owner, c.Repo.Name, c.Repo.BaseCommitSHA)
		v.Price = formatPrice(c.Price)
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
		b.commit = short(p.Contract.Repo.BaseCommitSHA)
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

// codeEmptyDiff is the reason the workflow records for an attempt that changed nothing.
const codeEmptyDiff = "empty_diff"

func newAttemptView(a *Attempt, c *contracts.Contract, base *baseShots, links Links) *attemptView {
	av := &attemptView{Attempt: a.Attempt, Try: a.Try, Rel: a.Rel, Problems: a.Problems}
	av.Anchor = fmt.Sprintf("attempt-%d-try-%d", a.Attempt, a.Try)
	if b := a.Bundle; b != nil {
		av.HasBundle = true
		if a.Attempt == 0 {
			av.Attempt, av.Try = b.Attempt, b.Try
		}
		av.B = bundleFields{SchemaVersion: b.SchemaVersion, ContractID: b.ContractID, ContractHash: b.ContractHash, Goal: b.Goal,
			BaseSHA: b.BaseSHA, ImplementationSHA: b.ImplementationSHA, EvidenceDigest: b.EvidenceDigest, TimelineHead: b.TimelineHead,
			Attempt: b.Attempt, Try: b.Try, BuildPassed: b.Build.Passed, Sandbox: b.Build.Sandbox,
			Unsandboxed: strings.HasPrefix(b.Build.Sandbox, "NOT SANDBOXED"), GateSource: b.Gate.Source, GateErrors: b.Gate.Errors}
		if b.Base != nil {
			av.B.BaseEvidence = b.Base.EvidenceDigest
		}
		for _, s := range b.Build.Steps {
			sv := stepView{Name: s.Name, Passed: s.Passed, DurationMS: s.DurationMS, Log: logName(s.Log)}
			for _, art := range b.Artifacts {
				if art.Name == s.Log && fileNameRe.MatchString(art.Name) {
					sv.LogHref = join(a.Rel, art.Name)
				}
			}
			av.B.Steps = append(av.B.Steps, sv)
		}
		av.Verdict, av.VerdictWord, av.VerdictCSS = b.Verdict, verdictWord(b.Verdict), verdictCSS(b.Verdict)
		for _, r := range b.Reasons {
			rv := reasonView{Rule: r.Rule, Code: r.Code, Criterion: r.Criterion, Check: r.Check, Message: r.Message}
			if r.Observed != nil || r.Expected != nil {
				rv.HasValues, rv.Observed, rv.Expected = true, contracts.FormatValue(r.Observed), contracts.FormatValue(r.Expected)
			}
			av.Reasons = append(av.Reasons, rv)
		}
		if len(b.Reasons) > 0 {
			av.Summary = b.Reasons[0].Message
		}
		av.Payment = paymentView{Provider: b.Payment.Provider, State: b.Payment.State, Session: b.Payment.CheckoutSessionID,
			Intent: b.Payment.PaymentIntentID, Local: b.Payment.Local}
		if b.Payment.Local {
			av.Payment.LocalLabel = LocalPaymentLabel
		}
		av.PR = prView{URL: shownPath(b.PR.URL), Branch: b.PR.Branch, Status: b.PR.Status, Number: b.PR.Number}
		if u, err := url.Parse(b.PR.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
			av.PR.Link = b.PR.URL
		}
		for _, e := range b.Timeline {
			if e.Type == "executed" && e.Data["attempt"] == strconv.Itoa(b.Attempt) {
				av.Diff, av.DiffEvent = e.Data["diff"], e.Seq
				av.Unchanged = e.Data["empty"] == "true"
			}
		}
		av.Files = fileViews(b.Artifacts, a.Rel)
		av.Signature = b.Signature
	}
	if e := a.Evidence; e != nil {
		av.E = &evidenceFields{SchemaVersion: e.SchemaVersion, ContractID: e.ContractID, ContractHash: e.ContractHash, Attempt: e.Attempt,
			VerifierName: e.Verifier.Name, VerifierVersion: e.Verifier.Version, VerifierID: e.Verifier.Digest,
			ExpectedSHA: e.ExpectedSHA, RuntimeSHA: e.RuntimeSHA, PreviewURL: e.PreviewURL,
			Browser: e.Browser.Name, BrowserVersion: e.Browser.Version, Mode: e.Browser.Mode, ReplayURL: e.Browser.ReplayURL,
			StartedAt: e.StartedAt, FinishedAt: e.FinishedAt, Signature: e.Signature}
		if u, err := url.Parse(e.Browser.ReplayURL); err == nil && u.Scheme == "https" {
			av.E.ReplayLink = e.Browser.ReplayURL
		}
		ev := fileViews(e.Artifacts, a.Rel)
		if a.Bundle == nil || !sameFiles(ev, av.Files) {
			av.EvFiles = ev
		}
	}
	if a.Bundle != nil {
		for _, r := range a.Bundle.Reasons {
			av.Unchanged = av.Unchanged || r.Code == codeEmptyDiff
		}
	}
	av.Rows, av.Unknown = criteriaRows(a, c)
	if a.Evidence != nil {
		av.Verified = true
		for _, r := range av.Rows {
			av.Total++
			if r.Result == "pass" {
				av.Passed++
			}
		}
	}
	av.Traces = traceViews(a, links)
	for i := range av.Rows {
		av.Rows[i].Trace = traceFor(av.Traces, av.Rows[i].ID, 0, 0)
	}
	av.Pairs = pairViews(a, av, base)
	for i := range av.Pairs {
		av.Pairs[i].Trace = traceFor(av.Traces, av.Pairs[i].Criterion, av.Pairs[i].VPW, av.Pairs[i].VPH)
	}
	return av
}

// criteriaRows recomputes every check of every criterion from the observed values, as the
// policy does, so the table shows expected, observed and pass/fail per check.
func criteriaRows(a *Attempt, c *contracts.Contract) ([]rowView, []resultView) {
	ev := a.Evidence
	results := map[string]*contracts.CriterionResult{}
	if ev != nil {
		for i := range ev.Results {
			if _, dup := results[ev.Results[i].CriterionID]; !dup {
				results[ev.Results[i].CriterionID] = &ev.Results[i]
			}
		}
	}
	failures := map[string][]string{}
	if a.Bundle != nil {
		for _, r := range a.Bundle.Reasons {
			if r.Criterion != "" {
				failures[r.Criterion] = append(failures[r.Criterion], r.Message)
			}
		}
	}
	var rows []rowView
	known := map[string]bool{}
	if c != nil {
		for i, cr := range c.Criteria {
			known[cr.ID] = true
			row := rowView{N: i + 1, ID: cr.ID, Description: cr.Description, Route: cr.Route, Failures: failures[cr.ID]}
			var vps []string
			for _, vp := range cr.Viewports() {
				vps = append(vps, fmt.Sprintf("%d×%d", vp.Width, vp.Height))
			}
			row.Viewports = strings.Join(vps, ", ")
			checks, err := contracts.ChecksFor(cr)
			res := results[cr.ID]
			switch {
			case ev == nil:
				row.Result = "not run"
			case res == nil:
				row.Result = "no result"
			}
			used := map[string]bool{}
			if err != nil {
				row.Error = err.Error()
			}
			anyFail, anyMissing := false, false
			for _, ch := range checks {
				cv := checkView{Key: ch.Key, Label: ch.Label, Viewport: viewportOf(ch.Key)}
				want, haveWant := ch.Expected, true
				if ch.ExpectedKey != "" {
					cv.Ref = true
					cv.Expected = fmt.Sprintf("%s %s", ch.Op, display(ch.ExpectedKey))
					if res != nil {
						want, haveWant = res.Observed[ch.ExpectedKey]
						used[ch.ExpectedKey] = true
						if haveWant {
							cv.Expected += " = " + contracts.FormatValue(want)
						}
					}
				} else {
					cv.Expected = fmt.Sprintf("%s %s", ch.Op, contracts.FormatValue(ch.Expected))
				}
				if res != nil {
					obs, ok := res.Observed[ch.Key]
					used[ch.Key] = true
					switch {
					case !ok || !haveWant:
						cv.Observed, cv.Result = "(not observed)", "missing"
						anyMissing = true
					default:
						cv.Observed = display(ch.Key) + " = " + contracts.FormatValue(obs)
						pass, err := contracts.Compare(ch.Op, obs, want)
						switch {
						case err != nil:
							cv.Result = "unusable"
							anyMissing = true
						case pass:
							cv.Result = "pass"
						default:
							cv.Result = "fail"
							anyFail = true
						}
					}
				}
				cv.CSS = resultCSS(cv.Result)
				row.Checks = append(row.Checks, cv)
			}
			if res != nil {
				row.HasResult = true
				row.Reported, row.DurationMS = res.Status, res.DurationMS
				row.Artifacts, row.PageErrors, row.ConsoleErrs = res.Artifacts, res.PageErrors, res.ConsoleErrors
				if res.Error != "" {
					row.Error = res.Error
				}
				row.Other = otherObserved(res.Observed, used)
				switch {
				case res.Status == contracts.StatusError || res.Status == contracts.StatusTimeout:
					row.Result = res.Status
				case anyFail:
					row.Result = "fail"
				case anyMissing:
					row.Result = "incomplete"
				default:
					row.Result = "pass"
				}
			}
			row.ResultCSS = resultCSS(row.Result)
			rows = append(rows, row)
		}
	}
	var unknown []resultView
	if ev != nil {
		for _, r := range ev.Results {
			if known[r.CriterionID] {
				continue
			}
			unknown = append(unknown, resultView{ID: r.CriterionID, Status: r.Status, Error: r.Error, Observed: otherObserved(r.Observed, nil),
				DurationMS: r.DurationMS, Artifacts: r.Artifacts, PageErrors: r.PageErrors, ConsoleErrs: r.ConsoleErrors})
		}
		// A criterion reported twice: the first result is in the table, the rest are listed.
		seen := map[string]bool{}
		for _, r := range ev.Results {
			if known[r.CriterionID] && seen[r.CriterionID] {
				unknown = append(unknown, resultView{ID: r.CriterionID + " (repeated)", Status: r.Status, Error: r.Error, Observed: otherObserved(r.Observed, nil),
					DurationMS: r.DurationMS, Artifacts: r.Artifacts, PageErrors: r.PageErrors, ConsoleErrs: r.ConsoleErrors})
			}
			seen[r.CriterionID] = true
		}
	}
	return rows, unknown
}

func resultCSS(r string) string {
	switch r {
	case "pass":
		return "ok"
	case "fail":
		return "bad"
	case "":
		return ""
	}
	return "warn"
}

func otherObserved(obs map[string]any, used map[string]bool) []kv {
	var keys []string
	for k := range obs {
		if !used[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]kv, 0, len(keys))
	for _, k := range keys {
		out = append(out, kv{k, contracts.FormatValue(obs[k])})
	}
	return out
}

var shotRe = regexp.MustCompile(`-(\d+)x(\d+)\.png$`)

func traceViews(a *Attempt, links Links) []traceView {
	var arts []contracts.Artifact
	switch {
	case a.Evidence != nil:
		arts = a.Evidence.Artifacts
	case a.Bundle != nil:
		arts = a.Bundle.Artifacts
	}
	var out []traceView
	for _, art := range arts {
		if art.Kind != contracts.ArtifactTrace {
			continue
		}
		tv := traceView{Criterion: art.Criterion, Name: art.Name, Raw: join(a.Rel, art.Name)}
		if links.TraceViewer != "" && links.Origin != "" && fileNameRe.MatchString(art.Name) {
			abs := links.Origin + links.FileBase + join(a.Rel, art.Name)
			tv.Viewer = links.TraceViewer + "?trace=" + url.QueryEscape(abs)
		}
		out = append(out, tv)
	}
	return out
}

func fileViews(arts []contracts.Artifact, rel string) []fileView {
	out := make([]fileView, 0, len(arts))
	for _, a := range arts {
		fv := fileView{Name: a.Name, Kind: a.Kind, Criterion: a.Criterion, SHA256: a.SHA256, Size: a.Size}
		if fileNameRe.MatchString(a.Name) {
			fv.Href = join(rel, a.Name)
		}
		out = append(out, fv)
	}
	return out
}

func sameFiles(a, b []fileView) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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

// traceFor is the criterion's trace at a viewport: the one whose name names the viewport, or
// the criterion's only one.
func traceFor(traces []traceView, criterion string, w, h int) *traceView {
	var found []*traceView
	for i := range traces {
		if traces[i].Criterion == criterion {
			found = append(found, &traces[i])
		}
	}
	vp := fmt.Sprintf("%dx%d", w, h)
	for _, t := range found {
		if strings.Contains(t.Name, vp) {
			return t
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	return nil
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

func formatPrice(p contracts.Price) string {
	return fmt.Sprintf("%d.%02d %s", p.Amount/100, p.Amount%100, strings.ToUpper(p.Currency))
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
