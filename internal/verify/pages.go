package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// A run opens one page per distinct state it measures. Criteria that only read their page (no
// action but waits, no expression of their own run in the page) at the same route, viewport,
// seed and budget share one settled page: it is loaded, waited on, watched and read once, with
// every such criterion's reads in each probe call, and each criterion still gets its own
// observed values, reads, screenshot and trace. A criterion that clicks, types, presses, holds
// a route, goes to another route or measures has its page alone.

// pageJob is one page a run opens, at one viewport, and the criteria read on it.
type pageJob struct {
	n       int // the job's place in the run, for unique file names
	vp      contracts.Viewport
	members []member
}

// member is a criterion read on a page: its index in the request and which of its viewports
// the page is.
type member struct {
	idx, k int
}

func (j pageJob) criteria(all []contracts.Criterion) []contracts.Criterion {
	out := make([]contracts.Criterion, len(j.members))
	for i, m := range j.members {
		out[i] = all[m.idx]
	}
	return out
}

// names lists the job's criteria, for the trace's title and sections.
func (j pageJob) names(all []contracts.Criterion) string {
	ids := make([]string, len(j.members))
	for i, m := range j.members {
		ids[i] = all[m.idx].ID
	}
	return strings.Join(ids, ", ")
}

// shareKey is the page state a read-only criterion measures at vp; ok is false for a
// criterion that needs a page of its own.
func shareKey(c contracts.Criterion, vp contracts.Viewport) (string, bool) {
	for _, a := range c.Actions {
		if a.Type != contracts.ActionWaitFor {
			return "", false // it acts on the page (or holds a route, or goes elsewhere)
		}
	}
	for _, l := range leaves(c.Assert, "") {
		if l.a.Kind == contracts.KindMeasure {
			return "", false // its expression runs in the page's own world
		}
		if _, _, err := readFor(l.a); err != nil {
			return "", false // reported on its own page
		}
	}
	budget := c.MaxRuntimeMS
	if budget <= 0 {
		budget = int(defaultBudget.Milliseconds())
	}
	b, err := json.Marshal(struct {
		Route  string
		VP     contracts.Viewport
		Seed   *contracts.Seed
		Budget int
	}{c.Route, vp, c.Seed, budget})
	if err != nil {
		return "", false
	}
	return string(b), true
}

// planPages lists the pages a run opens for its browser criteria, in contract order.
func planPages(criteria []contracts.Criterion) []pageJob {
	var jobs []pageJob
	open := map[string]int{} // share key -> job
	for i, c := range criteria {
		if c.Assert.Kind == contracts.KindHTTP {
			continue
		}
		for k, vp := range c.Viewports() {
			key, ok := shareKey(c, vp)
			if j, seen := open[key]; ok && seen && !slices.ContainsFunc(jobs[j].members, func(m member) bool { return m.idx == i }) {
				jobs[j].members = append(jobs[j].members, member{idx: i, k: k})
				continue
			}
			if ok {
				open[key] = len(jobs)
			}
			jobs = append(jobs, pageJob{n: len(jobs), vp: vp, members: []member{{idx: i, k: k}}})
		}
	}
	return jobs
}

// outcome is a criterion's result and artifacts.
type outcome struct {
	res  contracts.CriterionResult
	arts []contracts.Artifact
}

// measureAll runs the http criteria and the pages, at most pageConcurrency at once, and
// returns the criteria's outcomes in contract order.
func (r *run) measureAll(ctx context.Context) []outcome {
	crit := r.req.Criteria
	outs := make([]outcome, len(crit))
	jobs := planPages(crit)
	cos := make([]*criterionOutcome, len(crit))
	for i, c := range crit {
		cos[i] = &criterionOutcome{vps: make([]vpOutcome, len(c.Viewports()))}
	}
	for _, j := range jobs {
		for _, m := range j.members {
			cos[m.idx].left++
		}
	}
	var (
		mu    sync.Mutex
		parts = map[string]bool{} // trace parts, removed once every criterion merged its own
	)
	begin := func(i int) {
		mu.Lock()
		first := cos[i].first.IsZero()
		if first {
			cos[i].first = time.Now()
		}
		mu.Unlock()
		if first {
			r.progress(Progress{Index: i, Total: len(crit), Criterion: crit[i].ID, Phase: "start"})
		}
	}
	done := func(i int, o outcome) {
		outs[i] = o
		r.progress(Progress{Index: i, Total: len(crit), Criterion: crit[i].ID, Phase: "done", Status: o.res.Status})
		r.log.Debug("criterion done", "id", crit[i].ID, "status", o.res.Status, "ms", o.res.DurationMS, "error", o.res.Error)
	}

	// The units of work, in contract order: a criterion's first page comes where it stands.
	var units []func()
	for i, c := range crit {
		switch {
		case c.Assert.Kind == contracts.KindHTTP:
			units = append(units, func() {
				begin(i)
				done(i, outcome{res: r.httpCriterion(ctx, c)})
			})
			continue
		case cos[i].left == 0: // no viewport: assemble says so
			units = append(units, func() {
				begin(i)
				cos[i].last = time.Now()
				res, arts := r.assemble(c, cos[i])
				done(i, outcome{res, arts})
			})
			continue
		}
		for _, j := range jobs {
			if j.members[0].idx != i {
				continue
			}
			units = append(units, func() {
				for _, m := range j.members {
					begin(m.idx)
					r.progress(Progress{Index: m.idx, Total: len(crit), Criterion: crit[m.idx].ID, Viewport: vpName(j.vp), Phase: "viewport"})
				}
				lead := crit[j.members[0].idx]
				budget := time.Duration(lead.MaxRuntimeMS) * time.Millisecond
				if budget <= 0 {
					budget = defaultBudget
				}
				start := time.Now()
				deadline, factor := r.v.Config.realDeadline(start, budget, 1)
				// Past its share of the budget, the page clock jumps to the end for the
				// final read.
				share := start.Add(time.Duration(float64(deadline.Sub(start)) * shareOfBudget))
				pageOuts, tm := r.viewport(ctx, j, deadline, share, false)
				if noFrame(pageOuts) && time.Now().Before(deadline) {
					// The browser stopped painting this page, not the page misbehaving: a
					// new page, from the start, within what is left of the budget.
					r.log.Debug("the browser gave the page no frame; measuring it again on a new page", "criteria", j.names(crit), "viewport", vpName(j.vp), "ms", tm.ms)
					pageOuts, tm = r.viewport(ctx, j, deadline, share, false)
				}
				if failedWith(pageOuts, errWallClock) {
					// The page can tell its clock from the wall clock: a new page, from the
					// start, on the wall clock, with a real budget of its own (it watches the
					// whole budget in real time, and settles and is touched in real time too).
					start := time.Now()
					deadline, factor = r.v.Config.realDeadline(start, budget+wallMargin, 1)
					share = start.Add(time.Duration(float64(deadline.Sub(start)) * shareOfBudget))
					pageOuts, tm = r.viewport(ctx, j, deadline, share, true)
				}
				r.log.Debug("page done", "criteria", j.names(crit), "viewport", vpName(j.vp), "factor", factor, "ms", tm.ms, "setup_ms", tm.setupMS,
					"nav_ms", tm.navMS, "settle_ms", tm.settleMS, "artifacts_ms", tm.artifactMS, "error", pageOuts[0].err)
				for n, m := range j.members {
					mu.Lock()
					co := cos[m.idx]
					co.vps[m.k] = pageOuts[n]
					co.left--
					co.last = time.Now()
					last := co.left == 0
					if pageOuts[n].trace != "" {
						parts[pageOuts[n].trace] = true
					}
					mu.Unlock()
					if last {
						res, arts := r.assemble(crit[m.idx], co)
						done(m.idx, outcome{res, arts})
					}
				}
			})
		}
	}

	sem := make(chan struct{}, pageConcurrency)
	var wg sync.WaitGroup
	for _, u := range units {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			u()
		}()
	}
	wg.Wait()
	for p := range parts {
		_ = os.Remove(p)
	}
	return outs
}

// wallMargin is what a page measured on the wall clock spends in real time besides its
// budget, which the virtual clock gives for nearly nothing: quiet_ms before the first read, a
// person's pass and the watch after it (touchWatch).
const wallMargin = 15 * time.Second

// noFrame: the page's measure ended because Chromium gave it no frame (errNoFrame).
func noFrame(outs []vpOutcome) bool { return failedWith(outs, errNoFrame) }

// failedWith reports whether a page's outcome is target, for some member.
func failedWith(outs []vpOutcome, target error) bool {
	return slices.ContainsFunc(outs, func(o vpOutcome) bool { return errors.Is(o.err, target) })
}

// criterionOutcome gathers what a criterion's pages gave it, viewport by viewport.
type criterionOutcome struct {
	vps         []vpOutcome // in the criterion's viewport order
	left        int         // pages not yet done
	first, last time.Time
}

// assemble turns a criterion's viewports into its result and artifacts, and judges it from
// the observed values. Trace parts are merged into the criterion's own trace-<id>.zip; they
// are removed by the caller, since a shared page's part belongs to several criteria.
func (r *run) assemble(c contracts.Criterion, co *criterionOutcome) (contracts.CriterionResult, []contracts.Artifact) {
	res := newResult(c.ID)
	var arts []contracts.Artifact
	var traces []tracePart
	status, msg := "", ""
	if len(co.vps) == 0 {
		status, msg = contracts.StatusError, "a browser criterion needs a viewport"
	}
	for k, vp := range c.Viewports() {
		name := vpName(vp)
		out := co.vps[k]
		for k, v := range out.observed {
			res.Observed[k] = v
		}
		res.Reads = append(res.Reads, out.reads...)
		for _, e := range out.pageErrors {
			res.PageErrors = append(res.PageErrors, "["+name+"] "+e)
		}
		for _, e := range out.consoleErrors {
			res.ConsoleErrors = append(res.ConsoleErrors, "["+name+"] "+e)
		}
		if out.shot != "" {
			if a, err := r.artifact(out.shot, "screenshot", c.ID); err == nil {
				arts = append(arts, a)
				res.Artifacts = append(res.Artifacts, a.Name)
			} else if out.err == nil {
				out.err = err
			}
		}
		if out.trace != "" {
			traces = append(traces, tracePart{ordinal: name, path: out.trace})
		}
		if out.err != nil && status == "" {
			status = contracts.StatusError
			if errors.Is(out.err, errDeadline) {
				status = contracts.StatusTimeout
			}
			msg = name + ": " + firstLine(out.err.Error())
		}
	}
	if len(traces) > 0 {
		name := "trace-" + c.ID + ".zip"
		err := mergeTraces(filepath.Join(r.req.OutDir, name), traces)
		if err == nil {
			if a, err2 := r.artifact(name, "trace", c.ID); err2 == nil {
				arts = append(arts, a)
				res.Artifacts = append(res.Artifacts, a.Name)
			} else {
				err = err2
			}
		}
		if err != nil && status == "" {
			status, msg = contracts.StatusError, "trace: "+err.Error()
		}
	}
	if status == "" {
		status, msg = judge(c, res.Observed)
	}
	res.Status, res.Error = status, msg
	res.DurationMS = co.last.Sub(co.first).Milliseconds()
	return res, arts
}

// sharedWaits makes the waits of a shared page's members, each distinct one once, in the
// members' order.
func (r *run) sharedWaits(page playwright.Page, members []contracts.Criterion, outs []vpOutcome, deadline time.Time) {
	var done []contracts.Action
	for _, c := range members {
		for _, a := range c.Actions {
			if slices.ContainsFunc(done, func(d contracts.Action) bool { return reflect.DeepEqual(a, d) }) {
				continue
			}
			done = append(done, a)
			err := r.locatorAction(page, a, deadline)
			if err == nil {
				continue
			}
			for m, mc := range members {
				if i := slices.IndexFunc(mc.Actions, func(b contracts.Action) bool { return reflect.DeepEqual(a, b) }); i >= 0 && outs[m].err == nil {
					outs[m].err = fmt.Errorf("action %d (%s %s): %w", i+1, a.Type, a.Selector, err)
				}
			}
		}
	}
}

// beforeTouch is an observation without the read after a person's pass.
func beforeTouch(obs *observation) *observation {
	if n := len(obs.reads); n > 0 && obs.reads[n-1].why == ReadTouched {
		return &observation{reads: obs.reads[:n-1]}
	}
	return obs
}
