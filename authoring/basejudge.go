package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/contracts"
)

// BaseChecker runs a contract's criteria against its base commit. Package basecheck holds the
// implementations: one that builds a preview and drives the verifier on this machine, and one
// that runs the preview on the execute queue and the verifier on the verify queue.
type BaseChecker interface {
	CheckBase(ctx context.Context, c contracts.Contract) (*BaseReport, error)
}

// Outcomes of a criterion on the base commit.
const (
	OutcomePass   = "pass"
	OutcomeFail   = "fail"
	OutcomeAbsent = "absent" // an http check found no such member: what the change adds
	OutcomeError  = "error"
)

// BaseReport is what the criteria measured on a commit (the base, for the base check).
type BaseReport struct {
	// CommitSHA is the commit checked.
	CommitSHA string `json:"commit_sha"`
	// BuiltSHA is the commit the preview built: the base itself, or for an app in a subfolder
	// a commit whose tree is that subfolder of the base.
	BuiltSHA   string       `json:"built_sha"`
	RuntimeSHA string       `json:"runtime_sha"`
	Browser    string       `json:"browser,omitempty"`
	Results    []BaseResult `json:"results"`
	DurationMS int64        `json:"duration_ms"`
	// BuildMS is the time the preview took to build and start (0 when reused).
	BuildMS int64 `json:"build_ms"`
	// Where says what ran the check: WhereQueues or WhereLocal.
	Where string `json:"where,omitempty"`
	// ProofDir holds the signed evidence, screenshots and traces of the check.
	ProofDir string   `json:"proof_dir,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// FailingChecks are the repository's checks (lint, test) that fail on the base commit;
	// the check went on past them, and the quote names them (RecordFailingChecks).
	FailingChecks []contracts.PreexistingFailure `json:"failing_checks,omitempty"`
	// Variants are the contract's lazy variants (LazyVariants) measured on the same
	// preview: the contract's self-test.
	Variants []VariantReport `json:"variants,omitempty"`
}

// VariantReport is what the criteria measured on one lazy variant of the base. A checker
// may stop at the first criterion that fails on it (Results then hold only those run).
type VariantReport struct {
	Variant contracts.Variant `json:"variant"`
	Results []BaseResult      `json:"results,omitempty"`
	// Error says why the variant could not be measured at all.
	Error    string `json:"error,omitempty"`
	ProofDir string `json:"proof_dir,omitempty"`
	MS       int64  `json:"ms,omitempty"`
}

// Where a base check ran.
const (
	// WhereQueues: the preview built on the execute queue and the verifier ran on the verify
	// queue, the same workers and authority boundaries as an attempt.
	WhereQueues = "queues"
	// WhereLocal: this process built the preview and drove the browser itself.
	WhereLocal = "local"
)

// BaseResult is one criterion on the base commit.
type BaseResult struct {
	CriterionID string `json:"criterion_id"`
	Outcome     string `json:"outcome"`
	// Failures name each failed check with observed and expected values.
	Failures []string       `json:"failures,omitempty"`
	Error    string         `json:"error,omitempty"`
	Observed map[string]any `json:"observed,omitempty"`
}

// Result returns the criterion's result, or nil.
func (r *BaseReport) Result(id string) *BaseResult {
	for i := range r.Results {
		if r.Results[i].CriterionID == id {
			return &r.Results[i]
		}
	}
	return nil
}

// Classify turns verifier evidence for the base commit into per-criterion outcomes (set
// CommitSHA afterwards when another commit was checked). It
// recomputes pass and fail with contracts.ChecksFor and contracts.Compare, the same semantics
// the policy judges by, and does not trust the reported status.
func Classify(c contracts.Contract, ev *contracts.Evidence, builtSHA string) *BaseReport {
	r := &BaseReport{CommitSHA: c.Repo.BaseCommitSHA, BuiltSHA: builtSHA}
	if ev == nil {
		for _, cr := range c.Criteria {
			r.Results = append(r.Results, BaseResult{CriterionID: cr.ID, Outcome: OutcomeError, Error: "no evidence"})
		}
		return r
	}
	r.RuntimeSHA = ev.RuntimeSHA
	r.Browser = strings.TrimSpace(ev.Browser.Name + " " + ev.Browser.Version)
	if ev.RuntimeSHA != builtSHA {
		for _, cr := range c.Criteria {
			r.Results = append(r.Results, BaseResult{CriterionID: cr.ID, Outcome: OutcomeError,
				Error: fmt.Sprintf("the preview served commit %q, not the built %s: nothing was measured", ev.RuntimeSHA, contracts.ShortSHA(builtSHA))})
		}
		return r
	}
	if c.Verifier.Digest != "" && c.Verifier.Digest != ev.Verifier.Digest {
		for _, cr := range c.Criteria {
			r.Results = append(r.Results, BaseResult{CriterionID: cr.ID, Outcome: OutcomeError,
				Error: fmt.Sprintf("the contract is frozen against verifier %s (digest %.12s), this verifier is %s (digest %.12s): nothing was measured",
					c.Verifier.Version, c.Verifier.Digest, ev.Verifier.Version, ev.Verifier.Digest)})
		}
		return r
	}
	byID := map[string]contracts.CriterionResult{}
	for _, res := range ev.Results {
		byID[res.CriterionID] = res
	}
	for _, cr := range c.Criteria {
		res, ok := byID[cr.ID]
		if !ok {
			r.Results = append(r.Results, BaseResult{CriterionID: cr.ID, Outcome: OutcomeError, Error: "no result in the evidence"})
			continue
		}
		r.Results = append(r.Results, classifyOne(cr, res))
	}
	return r
}

func classifyOne(cr contracts.Criterion, res contracts.CriterionResult) BaseResult {
	br := BaseResult{CriterionID: cr.ID, Observed: res.Observed}
	if res.Status == contracts.StatusError || res.Status == contracts.StatusTimeout {
		br.Outcome, br.Error = OutcomeError, res.Status+": "+res.Error
		return br
	}
	checks, err := contracts.ChecksFor(cr)
	if err != nil {
		br.Outcome, br.Error = OutcomeError, err.Error()
		return br
	}
	absent := 0
	for _, ch := range checks {
		r := contracts.EvaluateCheck(ch, res.Observed)
		switch r.Outcome {
		case contracts.CheckUnmeasured:
			br.Outcome, br.Error = OutcomeError, r.Problem
			return br
		case contracts.CheckFail:
			if r.Absent != "" {
				absent++
				br.Failures = append(br.Failures, r.Absent)
				continue
			}
			br.Failures = append(br.Failures, failureText(ch, r.Observed, r.Expected))
		}
	}
	if absent > 0 && absent == len(br.Failures) {
		// Only members the response lacks: what the change is to add.
		br.Outcome = OutcomeAbsent
		return br
	}
	br.Outcome = OutcomePass
	if len(br.Failures) > 0 {
		br.Outcome = OutcomeFail
	}
	return br
}

var obsNames = map[string]string{
	contracts.ObsScrollWidth: "scrollWidth", contracts.ObsInnerWidth: "innerWidth", contracts.ObsInnerHeight: "innerHeight",
	contracts.ObsClipped: "elements cut off at the right edge", contracts.ObsStatus: "HTTP status",
	contracts.ObsPageErrors: "page errors", contracts.ObsConsoleErrors: "console errors", contracts.ObsCount: "matching elements",
}

// obsName turns an observed key ("390x844/0.scroll_width") into a word and its viewport.
func obsName(key string) (name, vp string) {
	leaf := key
	if i := strings.Index(key, "/"); i >= 0 {
		vp, leaf = key[:i], key[i+1:]
	}
	for {
		i := strings.Index(leaf, ".")
		if i <= 0 || strings.Trim(leaf[:i], "0123456789") != "" {
			break
		}
		leaf = leaf[i+1:]
	}
	if n, ok := obsNames[leaf]; ok {
		return n, vp
	}
	return leaf, vp
}

func failureText(ch contracts.Check, obs, want any) string {
	name, vp := obsName(ch.Key)
	at := ""
	if vp != "" {
		at = "at " + vp + ": "
	}
	if ch.ExpectedKey != "" {
		other, _ := obsName(ch.ExpectedKey)
		return fmt.Sprintf("%s%s = %s, %s = %s (want %s)", at, name, contracts.FormatValue(obs), other, contracts.FormatValue(want), ch.Label)
	}
	return fmt.Sprintf("%s%s: observed %s", at, ch.Label, contracts.FormatValue(obs))
}

// BaseJudgment says whether the criteria can tell the requested change from no change.
type BaseJudgment struct {
	// Checked is false when no base check ran (Skipped says why).
	Checked bool   `json:"checked"`
	Skipped string `json:"skipped,omitempty"`
	// Failing are criteria the base commit does not satisfy: the change must make them pass.
	Failing []string `json:"failing,omitempty"`
	// Guards are criteria the base already satisfies: regression guards the change must keep.
	Guards []string `json:"guards,omitempty"`
	// Problems are criteria that behaved unlike their role on the base (a guard that fails,
	// a check that could not run): worth a look before approving.
	Problems []string `json:"problems,omitempty"`
	// Preexisting are guards the base commit already fails: not what the goal asks for,
	// they are left out of the contract (PreexistingNotes say so, with what was observed)
	// rather than made a condition the change must meet.
	Preexisting      []string `json:"preexisting,omitempty"`
	PreexistingNotes []string `json:"preexisting_notes,omitempty"`
	// Variants say how the criteria (without the pre-existing ones) judged each lazy
	// variant: every one must be rejected for the contract to be offered.
	Variants []contracts.VariantOutcome `json:"variants,omitempty"`
	Report   *BaseReport                `json:"report,omitempty"`
}

// Record is what a contract workflow keeps of the check; nil when no check ran.
func (d *BaseJudgment) Record() *contracts.BaseCheck {
	if d == nil || !d.Checked || d.Report == nil {
		return nil
	}
	return &contracts.BaseCheck{BaseSHA: d.Report.CommitSHA, Failing: d.Failing, Guards: d.Guards, Where: d.Report.Where, ProofDir: d.Report.ProofDir, Variants: d.Variants}
}

// JudgeBase reads a base report against the draft's roles. It returns a
// BaseCheckError when the contract must not be offered: every criterion already holds
// on the base (vacuous), or none could be shown to fail (inconclusive).
func JudgeBase(d *criteria.Draft, r *BaseReport) (BaseJudgment, error) {
	out := BaseJudgment{Checked: true, Report: r}
	errored, timedOut := 0, 0
	for _, res := range r.Results {
		role := d.Role(res.CriterionID)
		switch res.Outcome {
		case OutcomePass:
			out.Guards = append(out.Guards, res.CriterionID)
		case OutcomeFail, OutcomeAbsent:
			if role == criteria.RoleGuard {
				why := strings.Join(res.Failures, "; ")
				out.Preexisting = append(out.Preexisting, res.CriterionID)
				out.PreexistingNotes = append(out.PreexistingNotes, fmt.Sprintf("left out, already failing on the base commit and not what the goal asks: %s (%s)", res.CriterionID, why))
				out.Problems = append(out.Problems, fmt.Sprintf("%s was planned as a regression guard but fails on the base commit (%s): left out of the contract as pre-existing; the page may already be broken there, or an anchor is wrong",
					res.CriterionID, why))
				continue
			}
			out.Failing = append(out.Failing, res.CriterionID)
		case OutcomeError:
			if role == criteria.RoleChange && usesNewHook(d, res.CriterionID) {
				// The control it clicks or fills is one the change adds: on the base the
				// action has nothing to act on, which is the change not being there.
				out.Failing = append(out.Failing, res.CriterionID)
				continue
			}
			errored++
			if res.timedOut() {
				timedOut++
			}
			out.Problems = append(out.Problems, fmt.Sprintf("%s could not be measured on the base commit: %s", res.CriterionID, res.Error))
		default:
			errored++
			out.Problems = append(out.Problems, fmt.Sprintf("%s could not be measured on the base commit: %s", res.CriterionID, res.Error))
		}
	}
	switch {
	case len(out.Failing) == 0 && errored == 0:
		return out, &BaseCheckError{Code: BaseVacuous, Reason: fmt.Sprintf("the base commit %s already satisfies all %d criteria: the contract could not tell the change from no change", contracts.ShortSHA(r.CommitSHA), len(r.Results))}
	case len(out.Failing) == 0 && timedOut == errored:
		return out, &BaseCheckError{Code: BaseBusy, Reason: fmt.Sprintf("the checks on the base commit %s timed out (%d of %d could not be measured in time): the host running them is busy. Nothing about the request is refused; ask again in a few minutes",
			contracts.ShortSHA(r.CommitSHA), errored, len(r.Results))}
	case len(out.Failing) == 0:
		return out, &BaseCheckError{Code: BaseInconclusive, Reason: fmt.Sprintf("no criterion could be shown to fail on the base commit %s (%d could not be measured)", contracts.ShortSHA(r.CommitSHA), errored)}
	}
	var weak []string
	// Runtime-error guards do not tell a variant apart: Signoff's edit of a hydrated page
	// may make the framework complain, which says nothing of the contract.
	var quiet []string
	for _, c := range d.Criteria {
		switch c.Assert.Kind {
		case contracts.KindLoads, contracts.KindNoPageErrors, contracts.KindNoConsoleErrors:
			quiet = append(quiet, c.ID)
		}
	}
	var late []string
	for _, vr := range r.Variants {
		o, outOfTime := judgeVariant(vr, len(r.Results), out.Preexisting, quiet)
		out.Variants = append(out.Variants, o)
		switch {
		case o.Rejected:
		case o.Error != "":
			out.Problems = append(out.Problems, fmt.Sprintf("the lazy variant %s could not be measured: %s", o.Name, o.Error))
			if outOfTime {
				late = append(late, o.Name)
			}
		default:
			weak = append(weak, fmt.Sprintf("%s (%s)", o.Name, o.Says))
		}
	}
	switch {
	case len(weak) > 0:
		return out, &BaseCheckError{Code: BaseWeak, Reason: fmt.Sprintf("the criteria cannot tell lazy work from the goal: every criterion passes on the lazy variant %s; "+
			"name what should change more precisely (the element by its text, where it goes, what it does)", strings.Join(weak, " and on "))}
	case len(late) > 0:
		// A check that ran out of time says nothing of the variant: counted as a rejection it
		// would let a weak contract through on a busy host, so the check is run again.
		return out, &BaseCheckError{Code: BaseBusy, Reason: fmt.Sprintf("the checks of the lazy variant %s on the base commit %s timed out: the host running them is busy. Nothing about the request is refused; ask again in a few minutes",
			strings.Join(late, " and "), contracts.ShortSHA(r.CommitSHA))}
	}
	return out, nil
}

// judgeVariant reads one variant's results, leaving out the criteria the contract drops as
// pre-existing failures and counting the quiet ones (runtime-error guards) as passed. The
// variant is rejected when some criterion failed or could not do what it does on it, and
// satisfies the contract when every one of the total passed. A criterion that ran out of
// time rejects nothing: when nothing else rejected the variant, it was not measured and
// outOfTime is true.
func judgeVariant(vr VariantReport, total int, preexisting, quiet []string) (o contracts.VariantOutcome, outOfTime bool) {
	o = contracts.VariantOutcome{Name: vr.Variant.Name, Says: vr.Variant.Says, ProofDir: vr.ProofDir}
	if vr.Error != "" {
		o.Error = vr.Error
		return o, false
	}
	var late []string
	passed := 0
	for _, res := range vr.Results {
		if slices.Contains(preexisting, res.CriterionID) {
			continue
		}
		switch {
		case res.Outcome == OutcomePass || slices.Contains(quiet, res.CriterionID):
			passed++
		case res.Outcome == OutcomeFail || res.Outcome == OutcomeAbsent:
			o.FailedBy = append(o.FailedBy, res.CriterionID+": "+firstOf(res.Failures))
		case res.timedOut():
			late = append(late, res.CriterionID)
		default:
			// The criterion could not do what it does on the variant (fill a block that is
			// no input, say): the policy's verdict would be verification_error, never
			// satisfied, so the variant is not what the contract pays for.
			o.FailedBy = append(o.FailedBy, res.CriterionID+": could not be measured on it: "+res.Error)
		}
	}
	o.Rejected = len(o.FailedBy) > 0
	switch {
	case o.Rejected:
	case len(late) > 0:
		o.Error = "ran out of time: " + strings.Join(late, ", ")
		return o, true
	case passed < total-len(preexisting):
		o.Error = fmt.Sprintf("only %d of %d criteria were run on it", passed, total-len(preexisting))
	}
	return o, false
}

// timedOut: the criterion could not be measured because it ran out of time (classifyOne
// prefixes the error with the status).
func (r BaseResult) timedOut() bool {
	return r.Outcome == OutcomeError && strings.HasPrefix(r.Error, contracts.StatusTimeout+": ")
}

func firstOf(failures []string) string {
	if len(failures) == 0 {
		return "failed"
	}
	return failures[0]
}

// usesNewHook reports whether a criterion acts on a test hook the draft declares and the
// base does not have.
func usesNewHook(d *criteria.Draft, id string) bool {
	for _, c := range d.Criteria {
		if c.ID != id {
			continue
		}
		for _, a := range c.Actions {
			for _, h := range d.TestHooks {
				if a.Selector != "" && a.Selector == h.Selector && a.Type != contracts.ActionGoto {
					return true
				}
			}
		}
	}
	return false
}

// FillStructure writes into c's structure assertions what the base check observed at each
// viewport (contracts.KindStructure): the main region of a page the goal leaves alone must
// keep the headings, links, buttons, images, lists and controls it has on the base. It
// returns c with the values in and a note per criterion filled, or c unchanged when it has
// no structure assertion left to fill. The terms change, so the caller hashes them again.
func FillStructure(c contracts.Contract, r *BaseReport) (contracts.Contract, []string, bool) {
	var notes []string
	changed := false
	crs := slices.Clone(c.Criteria)
	for i := range crs {
		res := r.Result(crs[i].ID)
		if res == nil {
			continue
		}
		a, did, note := fillStructure(crs[i].Assert, "", crs[i], res.Observed)
		if did {
			crs[i].Assert, changed = a, true
			notes = append(notes, note)
		}
	}
	if !changed {
		return c, nil, false
	}
	c.Criteria = crs
	return c, notes, true
}

// fillStructure fills the structure assertions in a (whose observed keys start with prefix).
func fillStructure(a contracts.Assertion, prefix string, cr contracts.Criterion, observed map[string]any) (contracts.Assertion, bool, string) {
	switch a.Kind {
	case contracts.KindAllOf:
		subs := slices.Clone(a.AllOf)
		did, note := false, ""
		for i := range subs {
			s, d, n := fillStructure(subs[i], fmt.Sprintf("%s%d.", prefix, i), cr, observed)
			if d {
				subs[i], did, note = s, true, n
			}
		}
		a.AllOf = subs
		return a, did, note
	case contracts.KindStructure:
		if len(a.Expected) > 0 {
			return a, false, ""
		}
		want := map[string]string{}
		var seen []string
		for _, vp := range cr.Viewports() {
			name := fmt.Sprintf("%dx%d", vp.Width, vp.Height)
			if s, ok := observed[contracts.ViewportPrefix(vp)+prefix+contracts.ObsStructure].(string); ok {
				want[name] = s
				n, _ := observed[contracts.ViewportPrefix(vp)+prefix+contracts.ObsStructureItems].(float64)
				seen = append(seen, fmt.Sprintf("%d items at %s", int(n), name))
			}
		}
		if len(want) == 0 {
			return a, false, ""
		}
		b, err := json.Marshal(want)
		if err != nil {
			return a, false, ""
		}
		a.Expected = b
		return a, true, fmt.Sprintf("%s: %s's main region is to keep the structure the base check observed (%s; headings, links, buttons, images, lists and controls by role and name, digits read as #)",
			cr.ID, cr.Route, strings.Join(seen, ", "))
	}
	return a, false, ""
}
