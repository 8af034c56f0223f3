package verify

import (
	"cmp"
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
	// targets is a session on the browser target, made once for the run's pages (browserTargets).
	targetsOnce sync.Once
	targets     playwright.CDPSession
	targetsErr  error
}

// browserTargets is the run's session on the browser target, where the browser's own targets
// (a shared worker, say) are listed.
func (r *run) browserTargets() (playwright.CDPSession, error) {
	r.targetsOnce.Do(func() {
		r.targets, r.targetsErr = r.browser.Browser.NewBrowserCDPSession()
		if r.targetsErr != nil {
			r.targetsErr = fmt.Errorf("browser session: %w", r.targetsErr)
		}
	})
	return r.targets, r.targetsErr
}

// closeTargets detaches the browser session, if the run made one.
func (r *run) closeTargets() {
	r.targetsOnce.Do(func() {}) // none made from here on
	if r.targets != nil {
		_ = r.targets.Detach()
	}
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
	trace                     string // path of the page's trace, merged later
	reads                     []contracts.Read
	err                       error
}

// pageTimes is where a page's time went, for the debug log.
type pageTimes struct {
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
	// Never nil: a member's lists, once set, are told apart from unset ones.
	return append([]string{}, s.console...), append([]string{}, s.page...)
}

// viewport opens one page at the job's viewport and reads every member criterion's assertion
// on it: each member gets its own observed values, reads, errors and screenshot file, and the
// page's trace to merge into its own. A failure of the page is every member's failure.
func (r *run) viewport(ctx context.Context, job pageJob, deadline, share time.Time, wall bool) (outs []vpOutcome, tm pageTimes) {
	start := time.Now()
	defer func() { tm.ms = time.Since(start).Milliseconds() }()
	vp := job.vp
	members := job.criteria(r.req.Criteria)
	lead := members[0] // route, seed, actions and budget are the same for every member (shareKey)
	outs = make([]vpOutcome, len(members))
	for m := range outs {
		outs[m].observed = map[string]any{}
	}
	failAll := func(err error) {
		for m := range outs {
			if outs[m].err == nil {
				outs[m].err = err
			}
		}
	}
	fail := func(err error) ([]vpOutcome, pageTimes) {
		failAll(err)
		return outs, tm
	}
	p, err := loadParams()
	if err != nil {
		return fail(err)
	}

	opts := playwright.BrowserNewContextOptions{
		Viewport:       &playwright.Size{Width: vp.Width, Height: vp.Height},
		ServiceWorkers: playwright.ServiceWorkerPolicyBlock,
	}
	dev := deviceFor(vp, r.browser.Info.Version)
	dev.contextOptions(&opts)
	closing := make(chan struct{}) // releases held delay_route and paced requests
	og := newOriginGuard(r.base, r.req.AllowedOrigins)
	og.pace = newPacer(deadline.Add(-holdMargin), closing, r.log)
	if r.browser.Info.Mode == ModeLocal {
		px, err := startPinProxy(og)
		if err != nil {
			return fail(err)
		}
		defer px.close()
		opts.Proxy = &playwright.Proxy{Server: px.server(), Username: &px.user, Password: &px.pass}
	}
	seed, err := seedItems(lead.Seed)
	if err != nil {
		return fail(err)
	}
	bctx, err := r.browser.Browser.NewContext(opts)
	if err != nil {
		return fail(fmt.Errorf("new browser context: %w", err))
	}
	traceOpen := false // tracing started and its trace not yet saved
	defer func() {
		if traceOpen {
			// The page is left without its trace (no frame, an error): discarding it removes
			// the driver's folder for it, which closing the context would leave behind.
			_ = guard(ctx, time.Now().Add(artifactTimeout), func() error { return bctx.Tracing().Stop() })
		}
		close(closing)
		_ = bctx.Close()
	}()
	if err := installVariant(bctx, r.req.Variant); err != nil {
		return fail(err)
	}
	page, err := bctx.NewPage()
	if err != nil {
		return fail(fmt.Errorf("new page: %w", err))
	}
	// The device's client hints live on a CDP session of the page's own, kept open with the
	// context: emulation set through a session ends when it detaches.
	devCDP, err := bctx.NewCDPSession(page)
	if err != nil {
		return fail(fmt.Errorf("device session: %w", err))
	}
	if err := dev.apply(devCDP); err != nil {
		return fail(err)
	}
	shared := &sharedWorkers{browser: r.browserTargets, page: devCDP, log: r.log}
	var seeder *seeder
	if seed != nil {
		if seeder, err = armSeed(devCDP, og.preview, seed); err != nil {
			return fail(err)
		}
	}
	// From here on every request and navigation of the page is the app's.
	if err := og.install(bctx); err != nil {
		return fail(err)
	}
	tracing := slices.ContainsFunc(members, func(c contracts.Criterion) bool { return r.requires(c, contracts.ArtifactTrace) })
	if tracing {
		// Screenshots, not DOM snapshots: Playwright snapshots the DOM from a script in the
		// page's own world, a global of its name beside built-ins it replaces, which the page
		// can see and answer with another page (device-automation-globals,
		// device-patched-natives). Screenshots come from the browser, outside the page.
		if err := bctx.Tracing().Start(playwright.TracingStartOptions{
			Screenshots: playwright.Bool(true),
			Snapshots:   playwright.Bool(false),
			Title:       playwright.String(job.names(r.req.Criteria) + " " + vpName(vp)),
		}); err != nil {
			return fail(fmt.Errorf("start tracing: %w", err))
		}
		traceOpen = true
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

	tm.setupMS = time.Since(start).Milliseconds()

	// Measure, then always try to leave a screenshot and a trace.
	var last screenShot // the screen as the last read captured it, if it did
	if err := r.drive(ctx, job, members, bctx, page, seeder, sink, og, shared, deadline, share, closing, outs, &tm, &last, tracing, wall); err != nil {
		last = screenShot{} // the page may have moved on from its last read: shown as it is now
		failAll(err)
		if errors.Is(err, errNoFrame) || errors.Is(err, errWallClock) {
			return outs, tm // measured again: a screenshot would wait in vain, or not be of the page judged
		}
	}
	console, pageErrs := sink.snapshot()
	for m := range outs {
		if outs[m].consoleErrors == nil { // drive did not get to this member
			outs[m].consoleErrors, outs[m].pageErrors = console, pageErrs
		}
	}

	t := time.Now()
	png, serr := r.fullPageShot(ctx, page, devCDP, last)
	if errors.Is(serr, errNoFrame) {
		// The page was read, but the browser paints it no more (a busy host): measured
		// again on a new page, as when a read's screenshot gets no frame.
		failAll(serr)
		return outs, tm
	}
	for m, c := range members {
		shot := fmt.Sprintf("shot-%s-%s.png", c.ID, vpName(vp))
		err := serr
		if err == nil {
			err = os.WriteFile(filepath.Join(r.req.OutDir, shot), png, 0o644)
		}
		if err == nil {
			outs[m].shot = shot
		} else if outs[m].err == nil {
			outs[m].err = fmt.Errorf("screenshot: %w", err)
		}
	}
	if tracing {
		part := filepath.Join(r.req.OutDir, fmt.Sprintf(".trace-%d-%s.zip", job.n, vpName(vp)))
		traceOpen = false
		terr := guard(ctx, time.Now().Add(artifactTimeout), func() error { return bctx.Tracing().Stop(part) })
		for m, c := range members {
			switch {
			case !r.requires(c, contracts.ArtifactTrace):
			case terr == nil:
				outs[m].trace = part
			case outs[m].err == nil:
				outs[m].err = fmt.Errorf("stop tracing: %w", terr)
			}
		}
	}
	tm.artifactMS = time.Since(t).Milliseconds()
	return outs, tm
}

// fullPageShot is the page's screenshot for the evidence. A page that fits its screen,
// unscrolled and unzoomed (screen.fits), is the screen: the one the last read captured for
// ink (last, when it did: the page as it was judged), else one capture of it over cdp (the
// page's own session), two frames. Any other page, or when the
// screen cannot be read, goes through Playwright's full-page screenshot, which lays the whole
// document out and renders it at its offset and scale, and back (four frames and more). One
// that does not come within artifactTimeout (Playwright's timeout or awaitFrame's) is
// errNoFrame.
func (r *run) fullPageShot(ctx context.Context, page playwright.Page, cdp playwright.CDPSession, last screenShot) ([]byte, error) {
	if len(last.png) > 0 && last.screen.fits() {
		return last.png, nil
	}
	wait := cmp.Or(r.v.Config.frameWait, artifactTimeout)
	// A page stuck in a loop answers nothing, not even its metrics: no frame.
	var sc screen
	err := awaitFrame(ctx, wait, r.v.Config.dropFrame, "Page.getLayoutMetrics", func() (err error) { sc, err = screenOf(r.log, cdp); return err })
	if errors.Is(err, errNoFrame) {
		return nil, fmt.Errorf("full-page screenshot: %w", err)
	}
	if err == nil && sc.fits() {
		var res any
		err := awaitFrame(ctx, wait, r.v.Config.dropFrame, "Page.screenshot", func() (err error) {
			res, err = cdpSend(r.log, cdp, "Page.captureScreenshot", map[string]any{"format": "png", "fromSurface": true})
			return err
		})
		if errors.Is(err, errNoFrame) {
			return nil, fmt.Errorf("full-page screenshot: %w", err)
		}
		if err == nil {
			if png, err := shotPNG(res); err == nil {
				return png, nil
			}
		}
	}
	var png []byte
	err = awaitFrame(ctx, wait, r.v.Config.dropFrame, "Page.screenshot", func() (err error) {
		png, err = page.Screenshot(playwright.PageScreenshotOptions{
			FullPage: playwright.Bool(true),
			Scale:    playwright.ScreenshotScaleCss,
			Timeout:  playwright.Float(float64(wait.Milliseconds())),
		})
		return err
	})
	if errors.Is(err, playwright.ErrTimeout) {
		err = fmt.Errorf("%w in %s", errNoFrame, wait)
	}
	if errors.Is(err, errNoFrame) {
		return nil, fmt.Errorf("full-page screenshot: %w", err)
	}
	return png, err
}

// drive navigates, performs the actions, waits for the page to settle and reads every
// member's observations into outs. An error it returns is the page's; a member's own (its
// checks, its measure) stays in its outcome.
func (r *run) drive(ctx context.Context, job pageJob, members []contracts.Criterion, bctx playwright.BrowserContext, page playwright.Page, seeder *seeder, sink *errSink, og *originGuard, shared *sharedWorkers, deadline, share time.Time, closing <-chan struct{}, outs []vpOutcome, tm *pageTimes, last *screenShot, tracing, wall bool) error {
	vp := job.vp
	lead := members[0]
	prefix := contracts.ViewportPrefix(vp)
	navStart := time.Now()
	for _, a := range lead.Actions {
		if a.Type != contracts.ActionDelayRoute {
			continue
		}
		if err := r.delayRoute(ctx, bctx, a, closing); err != nil {
			return err
		}
	}
	lvs := make([][]leaf, len(members))
	counts := false
	for m, c := range members {
		lvs[m] = leaves(c.Assert, "")
		counts = counts || slices.ContainsFunc(lvs[m], func(l leaf) bool { return l.a.Kind == contracts.KindRequest })
	}
	// The requests a request assertion counts, as Playwright sees them leave the page.
	firstInput := slices.IndexFunc(lead.Actions, isInput)
	reqs := newRequestLog(r.base, firstInput < 0)
	if counts {
		page.OnRequest(reqs.on)
		// The page's own DevTools session, which shared also asks.
		if firstInput >= 0 {
			if err := reqs.hear(r.log, shared.page); err != nil {
				return err
			}
		}
	}
	pend := newPendingLog(page, shared)
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
	if err := nav(lead.Route); err != nil {
		return err
	}
	if err := seeder.written(ctx, page, deadline, r.log); err != nil {
		return err
	}
	actions := lead.Actions
	if len(members) > 1 {
		// A shared page: every action is a wait (shareKey), made once for the members that
		// ask it; a wait that fails is theirs, and the page goes on for the others.
		r.sharedWaits(page, members, outs, deadline)
		actions = nil
	}
	for i, a := range actions {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i == firstInput && counts {
			if err := reqs.armAfter(r.log, shared.page); err != nil {
				return err
			}
		}
		var err error
		switch a.Type {
		case contracts.ActionDelayRoute:
			continue
		case contracts.ActionGoto:
			route := a.Route
			if route == "" {
				route = lead.Route
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

	tm.navMS = time.Since(navStart).Milliseconds()

	// Every member's reads go to the probe in one list: readOf[m][i] is where member m's
	// leaf i is read (-1 when the probe is not involved).
	var reads []probeRead
	readOf := make([][]int, len(members))
	var allLeaves []leaf
	var allReadOf []int
	geometry := false
	for m := range members {
		readOf[m] = make([]int, len(lvs[m]))
		for i, l := range lvs[m] {
			readOf[m][i] = -1
			pr, geo, err := readFor(l.a)
			if err != nil {
				return err
			}
			geometry = geometry || geo
			if pr != nil {
				readOf[m][i] = len(reads)
				reads = append(reads, *pr)
			}
		}
		allLeaves = append(allLeaves, lvs[m]...)
		allReadOf = append(allReadOf, readOf[m]...)
	}

	t := time.Now()
	// With a delayed route the check is about what the app shows while its data is held, so
	// the page is watched in real time and read while the route is held.
	held := slices.ContainsFunc(lead.Actions, func(a contracts.Action) bool { return a.Type == contracts.ActionDelayRoute })
	endMS := float64(lead.MaxRuntimeMS)
	if endMS <= 0 {
		endMS = float64(defaultBudget.Milliseconds())
	}
	if tracing {
		// Marks in the trace where the verifier watched and read (its CDP reads are not
		// Playwright actions, so they would not show otherwise).
		_ = bctx.Tracing().Group("signoff: watch the page to the end of its budget, reading the assertions of " + job.names(r.req.Criteria) + " in an isolated world")
	}
	p, err := loadParams()
	if err != nil {
		return err
	}
	dr := &driverReads{base: r.base, page: page, reqs: reqs, leaves: allLeaves, readOf: allReadOf, maxSide: p.BackgroundSamplePX, phone: contracts.IsPhone(vp), last: last}
	// A person's pass comes after the final read when some member reads the page. A member
	// that reads nothing of it would have had no pass on a page of its own: it is judged on
	// the errors and reads from before the pass.
	var before *errSink
	wo := watch{
		fill:  dr.fill,
		hold:  pend.hold(page, navStart, time.Duration(endMS)*time.Millisecond, wall),
		touch: touches(lead, vp) && len(reads) > 0,
		phone: contracts.IsPhone(vp),
		pace:  og.pace,
		talks: func() bool { return og.pace.earlyRequests() > 0 || pend.outside(page) },
		wall:  wall,
		beforeTouch: func() {
			c, p := sink.snapshot()
			before = &errSink{console: c, page: p}
		},
	}
	obs, err := r.observe(ctx, bctx, page, reads, geometry, held, endMS, deadline, share, wo)
	if tracing {
		_ = bctx.Tracing().GroupEnd()
	}
	tm.settleMS = time.Since(t).Milliseconds()
	if err != nil {
		return err
	}
	// Where the page is: a page, frame or popup that went elsewhere was not the commit's page.
	og.checkPage(page)
	leftOrigin, finalURL, blocked := og.leftURL(), clip(page.URL(), 2000), og.blockedList()
	console, pageErrs := sink.snapshot()
	for m, c := range members {
		out := &outs[m]
		if out.err != nil {
			continue // its wait failed
		}
		mobs := obs
		out.consoleErrors, out.pageErrors = console, pageErrs
		if before != nil && !slices.ContainsFunc(readOf[m], func(i int) bool { return i >= 0 }) {
			mobs = beforeTouch(obs)
			out.consoleErrors, out.pageErrors = before.console, before.page
		}
		if err := r.judgeMember(ctx, c, vp, page, lvs[m], readOf[m], mobs, navStatus, deadline, out); err != nil {
			out.err = err
			continue
		}
		out.observed[prefix+contracts.ObsLeftOrigin] = leftOrigin
		out.observed[prefix+contracts.ObsFinalURL] = finalURL
		if len(blocked) > 0 {
			out.observed[prefix+contracts.ObsBlocked] = blocked
		}
		for k, v := range out.observed {
			jv, err := jsonValue(v)
			if err != nil {
				out.err = fmt.Errorf("observed %s is not JSON: %w", k, err)
				break
			}
			out.observed[k] = jv
		}
	}
	return nil
}

// judgeMember picks the read a member is judged on and writes its observations into out.
func (r *run) judgeMember(ctx context.Context, c contracts.Criterion, vp contracts.Viewport, page playwright.Page, lv []leaf, readOf []int, obs *observation, navStatus int, deadline time.Time, out *vpOutcome) error {
	prefix := contracts.ViewportPrefix(vp)
	results, records, err := decide(c, vp, lv, readOf, obs)
	if err != nil {
		return err
	}
	out.reads = records
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
			out.observed[key(contracts.ObsPageErrors)] = float64(len(out.pageErrors))
		case contracts.KindNoPageErrors:
			out.observed[key(contracts.ObsPageErrors)] = float64(len(out.pageErrors))
		case contracts.KindNoConsoleErrors:
			out.observed[key(contracts.ObsConsoleErrors)] = float64(len(out.consoleErrors))
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
