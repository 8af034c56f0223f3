package verify

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

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
	VerifierVersion = "1"
)

// params mirrors probe/params.json.
type params struct {
	QuietMS          float64         `json:"quiet_ms"`
	PollMS           int             `json:"poll_ms"`
	StableReads      int             `json:"stable_reads"`
	BusyFallbackMS   int             `json:"busy_fallback_ms"`
	BusyStableReads  int             `json:"busy_stable_reads"`
	NetworkIdleCapMS int             `json:"network_idle_cap_ms"`
	EdgeTolerancePX  float64         `json:"edge_tolerance_px"`
	EdgeZonePX       float64         `json:"edge_zone_px"`
	MinVisiblePX     float64         `json:"min_visible_px"`
	MaxOffenders     int             `json:"max_offenders"`
	IgnoreConsole    []consoleFilter `json:"ignore_console"`
	raw              json.RawMessage
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
	if p.PollMS <= 0 || p.StableReads < 2 || p.BusyStableReads < p.StableReads {
		return nil, errors.New("probe params: poll_ms > 0 and stable_reads >= 2 <= busy_stable_reads are required")
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
	contextID int
}

const worldName = "signoff-verifier"

func newWorld(bctx playwright.BrowserContext, page playwright.Page) (*world, error) {
	s, err := bctx.NewCDPSession(page)
	if err != nil {
		return nil, fmt.Errorf("open cdp session: %w", err)
	}
	w := &world{cdp: s}
	if err := w.create(); err != nil {
		_ = s.Detach()
		return nil, err
	}
	return w, nil
}

// create makes a fresh isolated world in the current document (a navigation destroys it).
func (w *world) create() error {
	tree, err := w.cdp.Send("Page.getFrameTree", nil)
	if err != nil {
		return fmt.Errorf("cdp Page.getFrameTree: %w", err)
	}
	frameID, _ := dig(tree, "frameTree", "frame", "id").(string)
	if frameID == "" {
		return errors.New("cdp Page.getFrameTree: no main frame id")
	}
	res, err := w.cdp.Send("Page.createIsolatedWorld", map[string]any{
		"frameId":             frameID,
		"worldName":           worldName,
		"grantUniveralAccess": false, // sic: the protocol's spelling
	})
	if err != nil {
		return fmt.Errorf("cdp Page.createIsolatedWorld: %w", err)
	}
	id, ok := dig(res, "executionContextId").(float64)
	if !ok {
		return errors.New("cdp Page.createIsolatedWorld: no executionContextId")
	}
	w.contextID = int(id)
	return nil
}

// errWorldGone means the document the world lived in was replaced (a navigation).
var errWorldGone = errors.New("isolated world gone")

// call runs the probe with a request in the isolated world and returns its JSON result.
func (w *world) call(req any) (map[string]any, error) {
	arg, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	expr := "(" + string(probeJS) + ")(" + string(arg) + ")"
	res, err := w.cdp.Send("Runtime.evaluate", map[string]any{
		"expression":    expr,
		"contextId":     w.contextID,
		"returnByValue": true,
		"awaitPromise":  false,
		"silent":        true,
	})
	if err != nil {
		if strings.Contains(err.Error(), "Cannot find context") || strings.Contains(err.Error(), "context was destroyed") {
			return nil, errWorldGone
		}
		return nil, fmt.Errorf("cdp Runtime.evaluate: %w", err)
	}
	if ex, ok := dig(res, "exceptionDetails").(map[string]any); ok {
		msg, _ := dig(ex, "exception", "description").(string)
		if msg == "" {
			msg, _ = ex["text"].(string)
		}
		return nil, fmt.Errorf("probe: %s", firstLine(msg))
	}
	val, ok := dig(res, "result", "value").(map[string]any)
	if !ok {
		return nil, errors.New("probe: no result value")
	}
	return val, nil
}

func (w *world) close() { _ = w.cdp.Detach() }

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
