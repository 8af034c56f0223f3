// What `contract new` prints: the survey, the criteria, the base check and the quote, for
// people or as JSON.

package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/verify"
)

// newReport is the --json output.
type newReport struct {
	*authoring.Result
	ContractFile string         `json:"contract_file,omitempty"`
	QuoteFile    string         `json:"quote_file,omitempty"`
	Error        map[string]any `json:"error,omitempty"`
}

// reportNew prints the outcome and maps an error to its exit code: refusals of the request
// exit 2, a contract the base check refuses or a failure to run exits 1.
func reportNew(opts *NewOptions, res *authoring.Result, file string, err error) error {
	code := iostreams.ExitOK
	if err != nil {
		code = iostreams.ExitFailure
		if authoring.ExitClass(err) == "input" {
			code = iostreams.ExitBadInput
		}
	}
	if opts.JSON {
		rep := newReport{Result: res, ContractFile: file}
		if file != "" {
			rep.QuoteFile = QuotePath(file)
		}
		if rep.Result == nil {
			rep.Result = &authoring.Result{}
		}
		if err != nil {
			rep.Error = errorJSON(err)
		}
		if werr := opts.IO.WriteJSON(rep); werr != nil {
			return iostreams.Failed(werr)
		}
		if code != iostreams.ExitOK {
			return iostreams.SilentExit(code)
		}
		return nil
	}
	printNew(opts.IO, res, file)
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "%v\n", err)
		if verify.IsSetupError(err) {
			fmt.Fprintf(opts.IO.ErrOut, "run `%s` (and `go tool task fixture:setup`), or pass --no-check\n", verify.SetupTask)
		}
		return iostreams.SilentExit(code)
	}
	return nil
}

func errorJSON(err error) map[string]any {
	out := map[string]any{"message": err.Error()}
	var r *refusal.Error
	var a *authoring.AdmissionError
	var b *pricing.BudgetError
	var d *authoring.BaseCheckError
	var i *refusal.InputError
	switch {
	case errors.As(err, &r):
		out["kind"], out["code"], out["reason"], out["hint"] = "refused", r.Code, r.Reason, r.Hint
	case errors.As(err, &a):
		out["kind"], out["code"], out["reason"] = "admission", a.Code, a.Reason
	case errors.As(err, &b):
		out["kind"], out["price"], out["budget"] = "budget", b.Price, b.Budget
	case errors.As(err, &d):
		// "discrimination" is the base check's older name, kept for scripts reading --json.
		out["kind"], out["code"], out["reason"] = "discrimination", d.Code, d.Reason
	case errors.As(err, &i):
		out["kind"], out["field"], out["reason"] = "input", i.Field, i.Reason
	default:
		out["kind"] = "failed"
	}
	return out
}

func printNew(io *iostreams.IO, res *authoring.Result, file string) {
	if res == nil {
		return
	}
	if res.Survey != nil {
		io.Printf("Survey\n%s\n\n", indent(res.Survey.Summary(), "  "))
	}
	if res.Contract == nil {
		return
	}
	c := res.Contract
	io.Printf("Contract %s v%d: %d criteria for %q\n", c.ContractID, c.ContractVersion, len(c.Criteria), c.Goal)
	disc := res.BaseCheck
	for i, cr := range c.Criteria {
		where := cr.Route
		if vps := cr.Viewports(); len(vps) > 0 {
			var ns []string
			for _, v := range vps {
				ns = append(ns, fmt.Sprintf("%dx%d", v.Width, v.Height))
			}
			where += " " + strings.Join(ns, "+")
		} else {
			where += " (http)"
		}
		io.Printf("  %d. %-22s %-7s %-30s %s\n", i+1, cr.ID, res.Draft.Role(cr.ID), where, cr.Description)
	}
	for _, h := range c.TestHooks {
		io.Printf("  test hook %s: %s\n", h.Selector, h.Description)
	}
	if res.Draft != nil {
		for _, n := range res.Draft.Notes {
			io.Printf("  note: %s\n", n)
		}
	}
	io.Printf("\n")
	if disc != nil {
		switch {
		case !disc.Checked:
			io.Printf("BaseCheck: not run (%s)\n", disc.Skipped)
		default:
			rep := disc.Report
			where := "in this process"
			if rep.Where == authoring.WhereQueues {
				where = "on the execute and verify queues"
			}
			io.Printf("Base check on %s, %s (build %s, total %s):\n", contracts.ShortSHA(rep.CommitSHA), where, seconds(rep.BuildMS), seconds(rep.DurationMS))
			for _, r := range rep.Results {
				switch r.Outcome {
				case authoring.OutcomePass:
					io.Printf("  pass   %-22s already holds: regression guard\n", r.CriterionID)
				case authoring.OutcomeFail, authoring.OutcomeAbsent:
					io.Printf("  FAIL   %-22s %s\n", r.CriterionID, firstFew(r.Failures, 3))
				default:
					io.Printf("  error  %-22s %s\n", r.CriterionID, r.Error)
				}
			}
			for _, n := range rep.Notes {
				io.Printf("  note: %s\n", n)
			}
			for _, p := range disc.Problems {
				io.Printf("  check: %s\n", p)
			}
			if rep.ProofDir != "" {
				io.Printf("  evidence: %s\n", rep.ProofDir)
			}
			if len(disc.Failing) > 0 {
				io.Printf("  not vacuous: %d of %d criteria fail on the base commit; %d are regression guards\n", len(disc.Failing), len(rep.Results), len(disc.Guards))
			}
			if len(disc.Variants) > 0 {
				io.Printf("Self-test: the criteria on lazy variants of the base (Signoff's own edits, nothing built):\n")
			}
			for _, v := range disc.Variants {
				switch {
				case v.Rejected:
					io.Printf("  rejected  %-18s %s\n            by %s\n", v.Name, v.Says, firstFew(v.FailedBy, 2))
				case v.Error != "":
					io.Printf("  unknown   %-18s %s\n            could not be measured: %s\n", v.Name, v.Says, v.Error)
				default:
					io.Printf("  ACCEPTED  %-18s %s\n            every criterion passes on it\n", v.Name, v.Says)
				}
			}
		}
		io.Printf("\n")
	}
	if q := res.Estimate; q != nil && !res.Offered {
		io.Printf("No quote: this contract is not offered (the reason follows), so it has no price.\n\n")
	} else if q != nil {
		io.Printf("Quote: %s, about %d min, expires %s\n", q.Price.String(), q.EstimatedMinutes, q.ExpiresAt.Format(time.RFC3339))
		for _, f := range q.Factors {
			io.Printf("  %-45s %s\n", f.Name, contracts.Price{Amount: f.Amount, Currency: q.Price.Currency}.String())
		}
		io.Printf("\n")
	}
	if file != "" {
		io.Printf("Contract written to %s (quote: %s)\n", file, QuotePath(file))
		io.Printf("Contract hash (approve this): %s\n", res.Hash)
	}
}

// firstFew joins up to n items and counts the rest (the JSON output has them all).
func firstFew(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; (+%d more)", strings.Join(items[:n], "; "), len(items)-n)
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

func seconds(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) }
