package verify

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// The probe runs in the page's isolated world; params holds every tolerance and timing that
// decides a verdict. Both are hashed into the verifier digest.
var (
	//go:embed probe/probe.js
	probeJS []byte
	//go:embed probe/params.json
	paramsJSON []byte
)

// VerifierName and VerifierVersion identify this verifier in evidence.
const (
	VerifierName    = "signoff-verifier"
	VerifierVersion = "8"
)

// params mirrors probe/params.json. Times named _ms are page time (the browser's virtual
// clock) except stall_ms and the held_ ones, which are real time.
type params struct {
	// QuietMS is how long the page must go without a DOM mutation or a layout change before
	// the first read.
	QuietMS float64 `json:"quiet_ms"`
	// SettleStepMS is how far the page clock is advanced between polls before the first read,
	// ObserveStepMS between reads after it (a read at every step: a CSS animation changes what
	// is shown without a DOM mutation).
	SettleStepMS  int `json:"settle_step_ms"`
	ObserveStepMS int `json:"observe_step_ms"`
	// BusyFallbackMS: a page that never goes quiet is read from this page time on.
	BusyFallbackMS float64 `json:"busy_fallback_ms"`
	// StallMS is how long, in real time, one step may wait on pending fetches before the page
	// clock is let run regardless (a long poll never completes).
	StallMS int `json:"stall_ms"`
	// HeldQuietMS and HeldPollMS settle a page in real time while a delay_route holds its data.
	HeldQuietMS     float64 `json:"held_quiet_ms"`
	HeldPollMS      int     `json:"held_poll_ms"`
	EdgeTolerancePX float64 `json:"edge_tolerance_px"`
	EdgeZonePX      float64 `json:"edge_zone_px"`
	MinVisiblePX    float64 `json:"min_visible_px"`
	// A text is readable when its glyphs are painted at MinTextAlpha or more of opacity, its
	// line is MinTextPX or more across on screen (a font of about 6 px), and it is blurred by
	// at most MaxTextBlur of its font size.
	MinTextPX    float64 `json:"min_text_px"`
	MinTextAlpha float64 `json:"min_text_alpha"`
	MaxTextBlur  float64 `json:"max_text_blur"`
	MaxOffenders int     `json:"max_offenders"`
	// MaxStructureItems bounds a structure read (150 items of at most 40-character names).
	MaxStructureItems int `json:"max_structure_items"`
	MaxReads          int `json:"max_reads"`
	// BackgroundSamplePX is the longer side, in pixels, of the capture a background read
	// averages (the element's box is captured at a reduced scale).
	BackgroundSamplePX float64         `json:"background_sample_px"`
	IgnoreConsole      []consoleFilter `json:"ignore_console"`
	raw                json.RawMessage
}

type consoleFilter struct {
	TextPrefix string `json:"text_prefix"`
	Path       string `json:"path"`
}

var loadParams = sync.OnceValues(func() (*params, error) {
	var p params
	dec := json.NewDecoder(bytes.NewReader(paramsJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("probe params: %w", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, paramsJSON); err != nil {
		return nil, fmt.Errorf("probe params: %w", err)
	}
	p.raw = compact.Bytes()
	if p.SettleStepMS <= 0 || p.ObserveStepMS <= 0 || p.HeldPollMS <= 0 || p.StallMS <= 0 || p.MaxReads < 2 || p.BackgroundSamplePX < 1 {
		return nil, errors.New("probe params: steps and stall_ms > 0, max_reads >= 2 and background_sample_px >= 1 are required")
	}
	if p.MinTextPX <= 0 || p.MinTextAlpha <= 0 || p.MinTextAlpha > 1 || p.MaxTextBlur <= 0 {
		return nil, errors.New("probe params: min_text_px > 0, min_text_alpha in (0, 1] and max_text_blur > 0 are required")
	}
	return &p, nil
})

// probeSource is what the digest covers: each embedded file, named, in a fixed order.
func probeSource() []byte {
	var b bytes.Buffer
	for _, f := range []struct {
		name string
		data []byte
	}{{"probe/params.json", paramsJSON}, {"probe/probe.js", probeJS}} {
		fmt.Fprintf(&b, "%s %d\n", f.name, len(f.data))
		b.Write(f.data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Digest is the verifier digest contracts are frozen against: the probe code and parameters,
// the assertion semantics version and the Playwright driver version (not the browser's, which
// evidence records instead).
func Digest() string { return contracts.VerifierDigest(probeSource(), DriverVersion) }

// Ref is this verifier's identity as evidence records it.
func Ref() contracts.VerifierRef {
	return contracts.VerifierRef{Name: VerifierName, Version: VerifierVersion, Digest: Digest()}
}

// world is an isolated JavaScript world in a page's main frame, reached over a CDP session. Its
// globals and prototypes are its own, so the page's scripts cannot tamper with what it reads.
type world struct {
	cdp       playwright.CDPSession
	log       *slog.Logger
	frameWait time.Duration     // how long a screenshot may take (capture)
	dropFrame func(string) bool // Config.dropFrame
	contextID int
	probe     string             // the probe's function in the world, compiled once (create)
	handles   map[float64]string // shadow-root handles by backend node id
	roots     []string           // the last shadowRoots answer, while rootsDirty is false
	// rootsDirty: the document may have gained or lost a shadow root since roots was found.
	rootsDirty atomic.Bool
}

// rootsKeep are the DOM events that cannot add or remove a shadow root. Any other DOM event
// on the world's session marks its roots dirty (see shadowRoots).
var rootsKeep = map[string]bool{
	"DOM.attributeModified":      true,
	"DOM.attributeRemoved":       true,
	"DOM.characterDataModified":  true,
	"DOM.inlineStyleInvalidated": true,
}

const worldName = "signoff-verifier"

func newWorld(bctx playwright.BrowserContext, page playwright.Page, log *slog.Logger) (*world, error) {
	s, err := bctx.NewCDPSession(page)
	if err != nil {
		return nil, fmt.Errorf("open cdp session: %w", err)
	}
	w := &world{cdp: s, log: log}
	s.On("event", func(ev map[string]any) {
		if m, _ := ev["method"].(string); strings.HasPrefix(m, "DOM.") && !rootsKeep[m] {
			w.rootsDirty.Store(true)
		}
	})
	if err := w.create(); err != nil {
		_ = s.Detach()
		return nil, err
	}
	return w, nil
}

// create makes a fresh isolated world in the current document (a navigation destroys it).
func (w *world) create() error {
	_, id, err := isolatedWorld(w.log, w.cdp, worldName)
	if err != nil {
		return err
	}
	w.contextID = id
	w.handles, w.roots = nil, nil
	w.rootsDirty.Store(true)
	// The probe is compiled once per world and called by its handle: sending its source with
	// every poll and read made each of them carry and parse the whole probe again.
	fn, err := w.send("Runtime.evaluate", map[string]any{
		"expression": "(\n" + string(probeJS) + "\n)",
		"contextId":  w.contextID,
		"silent":     true,
	})
	if err != nil {
		return worldErr("Runtime.evaluate", err)
	}
	if err := exception(fn); err != nil {
		return err
	}
	if w.probe, _ = dig(fn, "result", "objectId").(string); w.probe == "" {
		return errors.New("probe: compiling it gave no function")
	}
	return nil
}

// isolatedWorld makes a fresh isolated world named name in the main frame's current document,
// over cdp, and returns the frame's id and the world's execution context id.
func isolatedWorld(log *slog.Logger, cdp playwright.CDPSession, name string) (frameID string, contextID int, err error) {
	tree, err := cdpSend(log, cdp, "Page.getFrameTree", nil)
	if err != nil {
		return "", 0, fmt.Errorf("cdp Page.getFrameTree: %w", err)
	}
	frameID, _ = dig(tree, "frameTree", "frame", "id").(string)
	if frameID == "" {
		return "", 0, errors.New("cdp Page.getFrameTree: no main frame id")
	}
	res, err := cdpSend(log, cdp, "Page.createIsolatedWorld", map[string]any{
		"frameId":             frameID,
		"worldName":           name,
		"grantUniveralAccess": false, // sic: the protocol's spelling
	})
	if err != nil {
		return "", 0, fmt.Errorf("cdp Page.createIsolatedWorld: %w", err)
	}
	id, ok := dig(res, "executionContextId").(float64)
	if !ok {
		return "", 0, errors.New("cdp Page.createIsolatedWorld: no executionContextId")
	}
	return frameID, int(id), nil
}

// exception is the probe's exception in a Runtime answer, nil when there is none.
func exception(res any) error {
	ex, ok := dig(res, "exceptionDetails").(map[string]any)
	if !ok {
		return nil
	}
	msg, _ := dig(ex, "exception", "description").(string)
	if msg == "" {
		msg, _ = ex["text"].(string)
	}
	return fmt.Errorf("probe: %s", firstLine(msg))
}

func (w *world) send(method string, params map[string]any) (any, error) {
	return cdpSend(w.log, w.cdp, method, params)
}

// errWorldGone means the document the world lived in was replaced (a navigation).
var errWorldGone = errors.New("isolated world gone")

// maxShadowRoots bounds how many shadow roots a read walks: a page cannot make the verifier
// resolve an unbounded number of handles.
const maxShadowRoots = 2000

// call runs the probe with a request in the isolated world and returns its JSON result. With
// withRoots, the page's shadow roots, open and closed, are passed in as handles, found over
// CDP because a closed root cannot be reached from script; extra handles come after them.
func (w *world) call(req any, withRoots bool, extra ...string) (map[string]any, error) {
	arg, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var roots []string
	if withRoots {
		if roots, err = w.shadowRoots(); err != nil {
			return nil, err
		}
	}
	// Plain JSON values: the driver re-encodes what it is given, and raw bytes would not
	// survive that.
	var value any
	if err := json.Unmarshal(arg, &value); err != nil {
		return nil, err
	}
	args := []map[string]any{{"value": value}}
	for _, id := range append(roots, extra...) {
		args = append(args, map[string]any{"objectId": id})
	}
	res, err := w.send("Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": callProbe,
		"objectId":            w.probe,
		"arguments":           args,
		"returnByValue":       true,
		"awaitPromise":        false,
		"silent":              true,
	})
	if err != nil {
		return nil, worldErr("Runtime.callFunctionOn", err)
	}
	if err := exception(res); err != nil {
		return nil, err
	}
	val, ok := dig(res, "result", "value").(map[string]any)
	if !ok {
		return nil, errors.New("probe: no result value")
	}
	return val, nil
}

// callProbe calls the function it is called on, the probe, with the request and the shadow
// roots.
const callProbe = "function (...args) { return this(...args); }"

// worldErr turns CDP's "the context is gone" answers into errWorldGone.
func worldErr(method string, err error) error {
	if m := err.Error(); strings.Contains(m, "Cannot find context") || strings.Contains(m, "context was destroyed") ||
		strings.Contains(m, "Cannot find default execution context") || strings.Contains(m, "Could not find object with given id") {
		return errWorldGone
	}
	return fmt.Errorf("cdp %s: %w", method, err)
}

// shadowRoots returns handles, in the isolated world, to every author shadow root of the main
// document (open and closed; not the browser's own user-agent roots, not other frames'), in
// document order. Handles are kept per backend node for the world's lifetime.
//
// Finding them fetches the whole document, which was half of every read's cost on W1. The
// answer is kept until a DOM event says the tree may have changed: DOM.getDocument binds
// every node of the composed tree to this session, and from then on Chromium reports here
// any node inserted or removed and any shadow root pushed or popped on a bound node (a root
// attached to a node not yet bound comes with, or after, that node's insertion). Events
// arrive in order on one dispatcher before the answer to a later call, so a change made
// before the page clock stopped is seen before the next read asks.
func (w *world) shadowRoots() ([]string, error) {
	if w.roots != nil && !w.rootsDirty.Load() {
		return w.roots, nil
	}
	w.rootsDirty.Store(false) // events from here on mark what this fetch may not have seen
	w.roots = nil
	doc, err := w.send("DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
	if err != nil {
		w.rootsDirty.Store(true)
		return nil, worldErr("DOM.getDocument", err)
	}
	var backend []float64
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if len(backend) >= maxShadowRoots {
			return
		}
		if srs, ok := n["shadowRoots"].([]any); ok {
			for _, s := range srs {
				sr, _ := s.(map[string]any)
				if sr == nil {
					continue
				}
				if t, _ := sr["shadowRootType"].(string); t != "user-agent" {
					if id, ok := sr["backendNodeId"].(float64); ok {
						backend = append(backend, id)
					}
					walk(sr)
				}
			}
		}
		if kids, ok := n["children"].([]any); ok {
			for _, k := range kids {
				if c, _ := k.(map[string]any); c != nil {
					walk(c)
				}
			}
		}
		// contentDocument (another frame) and templateContent (inert) are not walked.
	}
	root, _ := dig(doc, "root").(map[string]any)
	if root == nil {
		return nil, errors.New("cdp DOM.getDocument: no root")
	}
	walk(root)
	if w.handles == nil {
		w.handles = map[float64]string{}
	}
	out := make([]string, 0, len(backend))
	for _, id := range backend {
		h, ok := w.handles[id]
		if !ok {
			res, err := w.send("DOM.resolveNode", map[string]any{"backendNodeId": id, "executionContextId": w.contextID})
			if err != nil {
				if errors.Is(worldErr("", err), errWorldGone) {
					w.rootsDirty.Store(true)
					return nil, errWorldGone
				}
				continue // the node went away between the two calls
			}
			h, _ = dig(res, "object", "objectId").(string)
			if h == "" {
				continue
			}
			w.handles[id] = h
		}
		out = append(out, h)
	}
	w.roots = out
	return out, nil
}

// close detaches the world's session. A page stuck in a loop answers no detach: close does not
// wait on it past closeWait, and the session goes with its browser context.
func (w *world) close() {
	_ = guard(context.Background(), time.Now().Add(closeWait), func() error { return w.cdp.Detach() })
}

// closeWait bounds what closing a page's session waits for.
const closeWait = 5 * time.Second

// errNoFrame means Chromium did not answer a call that waits for the page's compositor: a
// screenshot, or an input event (a wheel is dispatched at the next frame). On a busy host a
// page has stopped giving frames for good: its Page.captureScreenshot went unanswered, and so
// did every screenshot after it (clipped or not, at any scale; bringing the page to the front,
// evaluating in it or letting its virtual clock run did not help) and its
// Input.dispatchMouseEvent, while Runtime calls on the same page and the browser's other pages
// went on. The page is measured again on a new one (measureAll).
var errNoFrame = errors.New("the browser gave the page no frame")

// frameWait is how long such a call may take before the page counts as giving no frame:
// answered ones take milliseconds, and under a load of 12 on two cores none took 5 s.
const frameWait = 20 * time.Second

// sendPainted is a CDP call that Chromium answers only after the page's compositor has run,
// bounded by frameWait (guard). The abandoned call ends when the page's context closes.
func (w *world) sendPainted(method string, params map[string]any) (any, error) {
	var res any
	err := awaitFrame(context.Background(), cmp.Or(w.frameWait, frameWait), w.dropFrame, method,
		func() (err error) { res, err = w.send(method, params); return err })
	return res, err
}

// awaitFrame runs call, which Chromium answers only after the page's compositor has run, and
// makes no answer within wait errNoFrame. drop (Config.dropFrame), when it says so for name,
// turns call into one Chromium never answers.
func awaitFrame(ctx context.Context, wait time.Duration, drop func(string) bool, name string, call func() error) error {
	if drop != nil && drop(name) {
		lost := make(chan struct{})
		defer close(lost)
		call = func() error { <-lost; return nil }
	}
	if err := guard(ctx, time.Now().Add(wait), call); errors.Is(err, errDeadline) {
		return fmt.Errorf("%w in %s", errNoFrame, wait)
	} else {
		return err
	}
}

// slowCDP is how long a CDP call may go unanswered before the verifier says so at debug level.
const slowCDP = 5 * time.Second

// cdpSend is a CDP call that says, at debug level, when the browser is slow to answer it: on a
// busy host, pages have waited out their whole budget on a call that never came back.
func cdpSend(log *slog.Logger, cdp playwright.CDPSession, method string, params map[string]any) (any, error) {
	start := time.Now()
	t := time.AfterFunc(slowCDP, func() { log.Debug("cdp call not answered yet", "method", method, "waited_ms", slowCDP.Milliseconds()) })
	res, err := cdp.Send(method, params)
	if !t.Stop() {
		log.Debug("cdp call answered late", "method", method, "ms", time.Since(start).Milliseconds(), "err", err)
	}
	return res, err
}

// dig walks nested JSON objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
