package proofpage

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
)

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
			Unsandboxed: strings.HasPrefix(b.Build.Sandbox, "NOT SANDBOXED"), ReusedBuild: b.Build.ReusedBuild, GateSource: b.Gate.Source, GateErrors: b.Gate.Errors}
		if b.Base != nil {
			av.B.BaseEvidence = b.Base.EvidenceDigest
		}
		for _, s := range b.Build.Steps {
			sv := stepView{Name: s.Name, Passed: s.Passed, Preexisting: s.Preexisting, Errors: s.Errors, DurationMS: s.DurationMS, Log: logName(s.Log)}
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
			if e.Type == contracts.EventExecuted && e.Data[contracts.DataAttempt] == strconv.Itoa(b.Attempt) {
				av.Diff, av.DiffEvent = e.Data[contracts.DataDiff], e.Seq
				av.Unchanged = e.Data[contracts.DataEmpty] == "true"
			}
		}
		av.Files = fileViews(b.Artifacts, a.Rel)
		av.Signature = b.Signature
	}
	if e := a.Evidence; e != nil {
		av.E = &evidenceFields{SchemaVersion: e.SchemaVersion, ContractID: e.ContractID, ContractHash: e.ContractHash, Attempt: e.Attempt,
			VerifierName: e.Verifier.Name, VerifierVersion: e.Verifier.Version, VerifierID: e.Verifier.Digest,
			ExpectedSHA: e.ExpectedSHA, RuntimeSHA: e.RuntimeSHA, PreviewURL: e.PreviewURL,
			Browser: e.Browser.Name, BrowserVersion: e.Browser.Version, Mode: e.Browser.Mode, RecordingURL: e.Browser.RecordingURL,
			StartedAt: e.StartedAt, FinishedAt: e.FinishedAt, Signature: e.Signature}
		if u, err := url.Parse(e.Browser.RecordingURL); err == nil && u.Scheme == "https" {
			av.E.RecordingLink = e.Browser.RecordingURL
		}
		ev := fileViews(e.Artifacts, a.Rel)
		if a.Bundle == nil || !sameFiles(ev, av.Files) {
			av.EvFiles = ev
		}
	}
	if a.Bundle != nil {
		for _, r := range a.Bundle.Reasons {
			av.Unchanged = av.Unchanged || r.Code == policy.CodeEmptyDiff
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
