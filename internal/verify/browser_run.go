package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// artifactTimeout bounds the screenshot and trace of a viewport. They are taken after the
// assertion was read, outside the criterion's max_runtime_ms, so a slow page still leaves
// evidence of what it looked like.
const artifactTimeout = 20 * time.Second

// shareOfBudget is the part of a viewport's fair share of the remaining budget it may spend
// watching the page step by step; the rest is for the final read, the screenshot and the trace.
const shareOfBudget = 0.6

// defaultBudget applies when a criterion gives no max_runtime_ms.
const defaultBudget = 30 * time.Second

// run is one Verify call.
type run struct {
	v       *Verifier
	req     *Request
	base    *url.URL
	browser *BrowserSession
	log     *slog.Logger
	// progressMu keeps Request.Progress to one call at a time: criteria run concurrently.
	progressMu sync.Mutex
}

// browserCriterion runs a criterion at each of its viewports, each in a fresh browser context,
// and judges it from the observed values.
func (r *run) browserCriterion(ctx context.Context, idx int, c contracts.Criterion) (contracts.CriterionResult, []contracts.Artifact) {
	start := time.Now()
	budget := time.Duration(c.MaxRuntimeMS) * time.Millisecond
	if budget <= 0 {
		budget = defaultBudget
	}
	deadline, factor := r.v.Config.realDeadline(start, budget, len(c.Viewports()))
	r.log.Debug("criterion real-time budget", "criterion", c.ID, "factor", factor, "until", deadline)
	res := contracts.CriterionResult{
		CriterionID:   c.ID,
		Observed:      map[string]any{},
		Artifacts:     []string{},
		PageErrors:    []string{},
		ConsoleErrors: []string{},
	}
	var arts []contracts.Artifact
	var traces []tracePart
	status, msg := "", ""
	wantTrace := r.requires(c, contracts.ArtifactTrace)

	vps := c.Viewports()
	if len(vps) == 0 {
		status, msg = contracts.StatusError, "a browser criterion needs a viewport"
	}
	for k, vp := range vps {
		name := vpName(vp)
		r.progress(Progress{Index: idx, Total: len(r.req.Criteria), Criterion: c.ID, Viewport: name, Phase: "viewport"})
		// This viewport's share of what is left of the budget, so a slow one does not starve
		// the next: past it, the page clock jumps to the end for the final read.
		share := time.Now().Add(time.Duration(float64(time.Until(deadline)) * shareOfBudget / float64(len(vps)-k)))
		out := r.viewport(ctx, c, vp, deadline, share, wantTrace)
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
		r.log.Debug("viewport done", "criterion", c.ID, "viewport", name, "ms", out.ms, "setup_ms", out.setupMS, "nav_ms", out.navMS,
			"settle_ms", out.settleMS, "artifacts_ms", out.artifactMS, "error", out.err)
	}
	if len(traces) > 0 {
		name := "trace-" + c.ID + ".zip"
		err := mergeTraces(filepath.Join(r.req.OutDir, name), traces)
		for _, t := range traces {
			_ = os.Remove(t.path)
		}
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
	res.DurationMS = time.Since(start).Milliseconds()
	return res, arts
}

// requires reports whether the evidence policy or the criterion asks for an artifact kind.
func (r *run) requires(c contracts.Criterion, kind string) bool {
	return slices.Contains(r.req.EvidencePolicy.Required, kind) || slices.Contains(c.RequiredArtifacts, kind)
}

func vpName(vp contracts.Viewport) string { return fmt.Sprintf("%dx%d", vp.Width, vp.Height) }

// vpOutcome is one viewport of one criterion.
type vpOutcome struct {
	observed                  map[string]any
	pageErrors, consoleErrors []string
	shot                      string // artifact name in OutDir
	trace                     string // path of this viewport's trace, merged later
	reads                     []contracts.Read
	err                       error
	tracing                   bool
	// timings, for the debug log
	ms, setupMS, navMS, settleMS, artifactMS int64
}

// leaf is one non-all_of assertion and the key prefix its observations go under.
type leaf struct {
	prefix string
	a      contracts.Assertion
}

func leaves(a contracts.Assertion, prefix string) []leaf {
	if a.Kind != contracts.KindAllOf {
		return []leaf{{prefix: prefix, a: a}}
	}
	var out []leaf
	for i, sub := range a.AllOf {
		out = append(out, leaves(sub, fmt.Sprintf("%s%d.", prefix, i))...)
	}
	return out
}

// probeRead is one measurement the isolated-world probe makes.
type probeRead struct {
	Kind     string   `json:"kind"`
	Selector string   `json:"selector,omitempty"`
	State    string   `json:"state,omitempty"`
	Texts    []string `json:"texts,omitempty"`
	Within   string   `json:"within,omitempty"`
	// Name is an attribute read's attribute; Ref the element a position read compares with.
	Name string `json:"name,omitempty"`
	Ref  string `json:"ref,omitempty"`
	// HasText keeps a position read to the matches whose text holds it.
	HasText string `json:"has_text,omitempty"`
	// Beside reads the row a position read's element shares with Ref.
	Beside bool `json:"beside,omitempty"`
}

// probeDriver is the probe's placeholder for a read the verifier makes outside the page (the
// URL, the requests): it is made at the same moments as the probe's own reads.
const probeDriver = "driver"

// readFor is the probe read an assertion is judged on (nil: the probe is not involved), and
// whether it is geometry (which needs something rendered).
func readFor(a contracts.Assertion) (*probeRead, bool, error) {
	switch a.Kind {
	case contracts.KindNoHorizontalOverflow:
		return &probeRead{Kind: "overflow", Within: a.Within}, true, nil
	case contracts.KindAttribute:
		return &probeRead{Kind: "attribute", Selector: a.Selector, Name: a.Name}, false, nil
	case contracts.KindBackground:
		return &probeRead{Kind: "background", Selector: a.Selector}, true, nil
	case contracts.KindStacked:
		return &probeRead{Kind: "stacked", Selector: a.Selector}, true, nil
	case contracts.KindPosition:
		ref := a.Before
		if ref == "" {
			ref = a.After
		}
		if a.Beside != "" {
			ref = a.Beside
		}
		return &probeRead{Kind: "position", Selector: a.Selector, Ref: ref, HasText: a.HasText, Beside: a.Beside != ""}, true, nil
	case contracts.KindURL, contracts.KindRequest:
		return &probeRead{Kind: probeDriver}, false, nil
	case contracts.KindStructure:
		return &probeRead{Kind: "structure"}, true, nil
	case contracts.KindInViewport:
		return &probeRead{Kind: "box", Selector: a.Selector}, true, nil
	case contracts.KindVisibleText:
		return &probeRead{Kind: "texts", Texts: a.Texts, Within: a.Within}, false, nil
	case contracts.KindElementPresent, contracts.KindElementAbsent:
		state := a.State
		if state == "" {
			state = contracts.StateVisible
		}
		return &probeRead{Kind: "count", Selector: a.Selector, State: state}, false, nil
	case contracts.KindLoads, contracts.KindNoConsoleErrors, contracts.KindNoPageErrors, contracts.KindMeasure:
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("assertion kind %q cannot run in a browser", a.Kind)
}

// errSink collects console and page errors from listener goroutines.
type errSink struct {
	mu            sync.Mutex
	console, page []string
}

func (s *errSink) snapshot() (console, page []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.console), slices.Clone(s.page)
}

func (r *run) viewport(ctx context.Context, c contracts.Criterion, vp contracts.Viewport, deadline, share time.Time, wantTrace bool) (out vpOutcome) {
	start := time.Now()
	defer func() { out.ms = time.Since(start).Milliseconds() }()
	out.observed = map[string]any{}
	p, err := loadParams()
	if err != nil {
		out.err = err
		return out
	}

	opts := playwright.BrowserNewContextOptions{
		Viewport:       &playwright.Size{Width: vp.Width, Height: vp.Height},
		ServiceWorkers: playwright.ServiceWorkerPolicyBlock,
	}
	dev := deviceFor(vp, r.browser.Info.Version)
	dev.contextOptions(&opts)
	og := newOriginGuard(r.base, r.req.AllowedOrigins)
	if r.browser.Info.Mode == ModeLocal {
		px, err := startPinProxy(og)
		if err != nil {
			out.err = err
			return out
		}
		defer px.close()
		opts.Proxy = &playwright.Proxy{Server: px.server(), Username: &px.user, Password: &px.pass}
	}
	if st, err := r.storageState(c.Seed); err != nil {
		out.err = err
		return out
	} else if st != nil {
		opts.StorageState = st
	}
	bctx, err := r.browser.Browser.NewContext(opts)
	if err != nil {
		out.err = fmt.Errorf("new browser context: %w", err)
		return out
	}
	closing := make(chan struct{}) // releases held delay_route requests
	defer func() {
		close(closing)
		_ = bctx.Close()
	}()
	if err := og.install(bctx); err != nil {
		out.err = err
		return out
	}
	if err := installVariant(bctx, r.req.Variant); err != nil {
		out.err = err
		return out
	}
	if wantTrace {
		if err := bctx.Tracing().Start(playwright.TracingStartOptions{
			Screenshots: playwright.Bool(true),
			Snapshots:   playwright.Bool(true),
			Title:       playwright.String(c.ID + " " + vpName(vp)),
		}); err != nil {
			out.err = fmt.Errorf("start tracing: %w", err)
			return out
		}
		out.tracing = true
	}
	page, err := bctx.NewPage()
	if err != nil {
		out.err = fmt.Errorf("new page: %w", err)
		return out
	}
	// The device's client hints live on a CDP session of the page's own, kept open with the
	// context: emulation set through a session ends when it detaches.
	devCDP, err := bctx.NewCDPSession(page)
	if err != nil {
		out.err = fmt.Errorf("device session: %w", err)
		return out
	}
	if err := dev.apply(devCDP); err != nil {
		out.err = err
		return out
	}
	sink := &errSink{}
	page.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() != "error" {
			return
		}
		sink.mu.Lock()
		defer sink.mu.Unlock()
		if ignoredConsole(p, m) {
			return
		}
		sink.console = append(sink.console, consoleText(m))
	})
	page.OnPageError(func(err error) {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		sink.page = append(sink.page, pageErrorText(err))
	})

	out.setupMS = time.Since(start).Milliseconds()

	// Measure, then always try to leave a screenshot and a trace.
	out.err = r.drive(ctx, c, vp, bctx, page, sink, og, deadline, share, closing, &out)
	console, pageErrs := sink.snapshot()
	out.consoleErrors, out.pageErrors = console, pageErrs

	t := time.Now()
	shot := fmt.Sprintf("shot-%s-%s.png", c.ID, vpName(vp))
	_, serr := page.Screenshot(playwright.PageScreenshotOptions{
		Path:     playwright.String(filepath.Join(r.req.OutDir, shot)),
		FullPage: playwright.Bool(true),
		Scale:    playwright.ScreenshotScaleCss,
		Timeout:  playwright.Float(float64(artifactTimeout.Milliseconds())),
	})
	if serr == nil {
		out.shot = shot
	} else if out.err == nil {
		out.err = fmt.Errorf("screenshot: %w", serr)
	}
	if out.tracing {
		part := filepath.Join(r.req.OutDir, fmt.Sprintf(".trace-%s-%s.zip", c.ID, vpName(vp)))
		terr := guard(ctx, time.Now().Add(artifactTimeout), func() error { return bctx.Tracing().Stop(part) })
		if terr == nil {
			out.trace = part
		} else if out.err == nil {
			out.err = fmt.Errorf("stop tracing: %w", terr)
		}
	}
	out.artifactMS = time.Since(t).Milliseconds()
	return out
}

// drive navigates, performs the actions, waits for the page to settle and reads every
// observation of the criterion into out.observed.
func (r *run) drive(ctx context.Context, c contracts.Criterion, vp contracts.Viewport, bctx playwright.BrowserContext, page playwright.Page, sink *errSink, og *originGuard, deadline, share time.Time, closing <-chan struct{}, out *vpOutcome) error {
	prefix := contracts.ViewportPrefix(vp)
	navStart := time.Now()
	for _, a := range c.Actions {
		if a.Type != contracts.ActionDelayRoute {
			continue
		}
		if err := r.delayRoute(ctx, bctx, a, closing); err != nil {
			return err
		}
	}
	// The requests a request assertion counts, as Playwright sees them leave the page.
	firstInput := slices.IndexFunc(c.Actions, isInput)
	reqs := newRequestLog(r.base, firstInput < 0)
	if slices.ContainsFunc(leaves(c.Assert, ""), func(l leaf) bool { return l.a.Kind == contracts.KindRequest }) {
		page.OnRequest(reqs.on)
	}
	pend := newPendingLog(page)
	navStatus := -1
	nav := func(route string) error {
		ms, err := budgetMS(deadline, 0)
		if err != nil {
			return err
		}
		resp, err := page.Goto(joinRoute(r.base, route), playwright.PageGotoOptions{
			Timeout:   playwright.Float(ms),
			WaitUntil: playwright.WaitUntilStateLoad,
		})
		if err != nil {
			return classify(fmt.Errorf("goto %s: %w", route, err), deadline)
		}
		if resp == nil {
			return fmt.Errorf("goto %s: no response for the main navigation", route)
		}
		navStatus = resp.Status()
		return nil
	}
	if err := nav(c.Route); err != nil {
		return err
	}
	for i, a := range c.Actions {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i == firstInput {
			reqs.arm()
		}
		var err error
		switch a.Type {
		case contracts.ActionDelayRoute:
			continue
		case contracts.ActionGoto:
			route := a.Route
			if route == "" {
				route = c.Route
			}
			err = nav(route)
		case contracts.ActionClick, contracts.ActionFill, contracts.ActionWaitFor, contracts.ActionPress:
			err = r.locatorAction(page, a, deadline)
		default:
			err = fmt.Errorf("unknown action type %q", a.Type)
		}
		if err != nil {
			return fmt.Errorf("action %d (%s %s): %w", i+1, a.Type, a.Selector, err)
		}
	}

	out.navMS = time.Since(navStart).Milliseconds()

	lv := leaves(c.Assert, "")
	var reads []probeRead
	readOf := make([]int, len(lv)) // index into reads, -1 when the probe is not involved
	geometry := false
	for i, l := range lv {
		readOf[i] = -1
		pr, geo, err := readFor(l.a)
		if err != nil {
			return err
		}
		geometry = geometry || geo
		if pr != nil {
			readOf[i] = len(reads)
			reads = append(reads, *pr)
		}
	}

	t := time.Now()
	// With a delayed route the check is about what the app shows while its data is held, so
	// the page is watched in real time and read while the route is held.
	held := slices.ContainsFunc(c.Actions, func(a contracts.Action) bool { return a.Type == contracts.ActionDelayRoute })
	endMS := float64(c.MaxRuntimeMS)
	if endMS <= 0 {
		endMS = float64(defaultBudget.Milliseconds())
	}
	if out.tracing {
		// Marks in the trace where the verifier watched and read (its CDP reads are not
		// Playwright actions, so they would not show otherwise).
		_ = bctx.Tracing().Group("signoff: watch the page to the end of its budget, reading the assertion in an isolated world")
	}
	p, err := loadParams()
	if err != nil {
		return err
	}
	dr := &driverReads{base: r.base, page: page, reqs: reqs, leaves: lv, readOf: readOf, maxSide: p.BackgroundSamplePX}
	wo := watch{fill: dr.fill, hold: pend.hold(page, navStart, time.Duration(endMS)*time.Millisecond), touch: touches(c, vp) && len(reads) > 0, phone: contracts.IsPhone(vp)}
	obs, err := r.observe(ctx, bctx, page, reads, geometry, held, endMS, deadline, share, wo)
	if out.tracing {
		_ = bctx.Tracing().GroupEnd()
	}
	out.settleMS = time.Since(t).Milliseconds()
	if err != nil {
		return err
	}
	results, records, err := decide(c, vp, lv, readOf, obs)
	if err != nil {
		return err
	}
	out.reads = records
	// Where the page is: a page, frame or popup that went elsewhere was not the commit's page.
	og.checkPage(page)
	out.observed[prefix+contracts.ObsLeftOrigin] = og.leftURL()
	out.observed[prefix+contracts.ObsFinalURL] = clip(page.URL(), 2000)
	if b := og.blockedList(); len(b) > 0 {
		out.observed[prefix+contracts.ObsBlocked] = b
	}
	console, pageErrs := sink.snapshot()
	for i, l := range lv {
		key := func(k string) string { return prefix + l.prefix + k }
		if readOf[i] >= 0 {
			m, _ := results[readOf[i]].(map[string]any)
			for k, v := range m {
				out.observed[key(k)] = v
			}
		}
		switch l.a.Kind {
		case contracts.KindLoads:
			out.observed[key(contracts.ObsStatus)] = float64(navStatus)
			out.observed[key(contracts.ObsPageErrors)] = float64(len(pageErrs))
		case contracts.KindNoPageErrors:
			out.observed[key(contracts.ObsPageErrors)] = float64(len(pageErrs))
		case contracts.KindNoConsoleErrors:
			out.observed[key(contracts.ObsConsoleErrors)] = float64(len(console))
		case contracts.KindMeasure:
			v, err := r.mainWorld(ctx, page, l.a.Expression, deadline)
			if err != nil {
				return fmt.Errorf("measure %s: %w", l.a.Expression, err)
			}
			out.observed[key(contracts.ObsValue)] = v
			if l.a.ExpectedFrom != "" {
				v, err := r.mainWorld(ctx, page, l.a.ExpectedFrom, deadline)
				if err != nil {
					return fmt.Errorf("measure expected_from %s: %w", l.a.ExpectedFrom, err)
				}
				out.observed[key(contracts.ObsExpectedValue)] = v
			}
		}
	}
	for k, v := range out.observed {
		jv, err := jsonValue(v)
		if err != nil {
			return fmt.Errorf("observed %s is not JSON: %w", k, err)
		}
		out.observed[k] = jv
	}
	return nil
}

func ignoredConsole(p *params, m playwright.ConsoleMessage) bool {
	loc := m.Location()
	if loc == nil {
		return false
	}
	u, err := url.Parse(loc.URL)
	if err != nil {
		return false
	}
	for _, f := range p.IgnoreConsole {
		if strings.HasPrefix(m.Text(), f.TextPrefix) && u.Path == f.Path {
			return true
		}
	}
	return false
}

func consoleText(m playwright.ConsoleMessage) string {
	s := m.Text()
	if loc := m.Location(); loc != nil && loc.URL != "" {
		s += fmt.Sprintf(" (%s:%d)", loc.URL, loc.Line+1)
	}
	return s
}

func pageErrorText(err error) string {
	var pe *playwright.Error
	if errors.As(err, &pe) {
		if pe.Name != "" {
			return pe.Name + ": " + pe.Message
		}
		return pe.Message
	}
	return err.Error()
}
