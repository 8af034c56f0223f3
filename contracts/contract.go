// Package contracts holds the completion contract: the frozen, hashed terms a user approves,
// the criteria a verifier runs, and the evidence and proof bundle that come back. It is the
// ground floor of Signoff and imports nothing of Temporal or of the activities.
package contracts

import "encoding/json"

// SchemaVersion is the wire version of contracts written by this code.
const SchemaVersion = "signoff.contract/v1"

// ReleaseCaptureOnSatisfied is the only release rule: capture the authorized payment only on
// a satisfied verdict, cancel the authorization otherwise.
const ReleaseCaptureOnSatisfied = "capture_on_satisfied"

// Criteria count bounds. More than MaxCriteria needs an explicit allowance at load time.
const (
	MinCriteria = 4
	MaxCriteria = 6
)

// Viewport bounds accepted in criteria.
const (
	MinViewportWidth  = 240
	MaxViewportWidth  = 3840
	MinViewportHeight = 240
	MaxViewportHeight = 2400
)

// Contract is the frozen terms. Everything here is covered by the contract hash; approval,
// payment references and status live outside it and are bound to the hash.
type Contract struct {
	SchemaVersion   string     `json:"schema_version"`
	ContractID      string     `json:"contract_id"`
	ContractVersion int        `json:"contract_version"`
	Goal            string     `json:"goal"`
	Repo            Repo       `json:"repo"`
	Stack           Stack      `json:"stack"`
	TestHooks       []TestHook `json:"test_hooks,omitempty"`
	// AllowedOrigins are the origins besides the preview's that the page may load
	// subresources from (a font host, say): "https://fonts.example". Everything else is
	// blocked in the verifier's browser; a page or frame that navigates elsewhere fails.
	AllowedOrigins []string       `json:"allowed_origins,omitempty"`
	Criteria       []Criterion    `json:"criteria"`
	EvidencePolicy EvidencePolicy `json:"evidence_policy"`
	Verifier       VerifierRef    `json:"verifier"`
	MaxAttempts    int            `json:"max_attempts"`
	ReleaseRule    string         `json:"release_rule"`
	Price          Price          `json:"price"`
}

// Repo pins the repository and the commit the work starts from.
type Repo struct {
	Owner         string `json:"owner"`
	Name          string `json:"name"`
	URL           string `json:"url"`
	BaseCommitSHA string `json:"base_commit_sha"`
}

// Stack says how the app is installed, built and started.
type Stack struct {
	Framework      string `json:"framework"`
	PackageManager string `json:"package_manager"`
	// PackageManagerVersion is the release the repository declares (its packageManager
	// field: "9.15.9", with "+sha512.<hex>" when it pins the hash); empty when it declares
	// none and the preview's pinned release runs.
	PackageManagerVersion string `json:"package_manager_version,omitempty"`
	Install               string `json:"install"`
	Build                 string `json:"build"`
	Start                 string `json:"start"`
	Port                  int    `json:"port"`
	// AppDir is the app's folder inside the repository ("web", "apps/shop"); empty for the
	// root. The preview builds and serves that folder of the commit and still reports the
	// commit's own SHA.
	AppDir string `json:"app_dir,omitempty"`
	// Preexisting are the repository's checks that already fail on the base commit and that
	// the goal is not about: the change is judged by the same steps, and may fail them no
	// worse than the base does (Tolerates).
	Preexisting []PreexistingFailure `json:"preexisting_failures,omitempty"`
	// Env are the non-secret variables every preview step (install aside) and the app get:
	// what the repository declares in .signoff/preview.env, or what the survey proposes
	// from its .env.example. A value may name a service's address (PostgresURLRef).
	Env map[string]string `json:"preview_env,omitempty"`
	// Services are throwaway services the preview starts for the app, inside the job's
	// sandbox, their data thrown away with it (ServicePostgres).
	Services []string `json:"services,omitempty"`
}

// TestHook is a selector the contract declares and hands to the executor, so criteria may
// name elements the base commit does not have yet.
type TestHook struct {
	Selector    string `json:"selector"`
	Description string `json:"description"`
}

// EvidencePolicy names the artifacts every criterion result must carry.
type EvidencePolicy struct {
	Required []string `json:"required"`
}

// Artifact kinds a criterion can require.
const (
	ArtifactObserved   = "observed"
	ArtifactScreenshot = "screenshot"
	ArtifactTrace      = "trace"
)

// VerifierRef identifies the verifier semantics the contract was frozen against.
type VerifierRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
}

// Price is a fixed price in minor units (cents).
type Price struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Criterion is one executable check.
type Criterion struct {
	ID                string     `json:"id"`
	Description       string     `json:"description"`
	Route             string     `json:"route"`
	Viewport          *Viewport  `json:"viewport,omitempty"`
	ExtraViewports    []Viewport `json:"extra_viewports,omitempty"`
	Seed              *Seed      `json:"seed,omitempty"`
	Actions           []Action   `json:"actions,omitempty"`
	Assert            Assertion  `json:"assert"`
	MaxRuntimeMS      int        `json:"max_runtime_ms"`
	RequiredArtifacts []string   `json:"required_artifacts"`
}

// Viewports returns the viewports the criterion runs at, the primary one first.
func (c Criterion) Viewports() []Viewport {
	if c.Viewport == nil {
		return nil
	}
	return append([]Viewport{*c.Viewport}, c.ExtraViewports...)
}

// Viewport is a browser window size in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Seed is state placed in the browser before the app's scripts run.
type Seed struct {
	LocalStorage map[string]json.RawMessage `json:"local_storage"`
}

// Action kinds.
const (
	ActionGoto       = "goto"
	ActionClick      = "click"
	ActionFill       = "fill"
	ActionWaitFor    = "wait_for"
	ActionDelayRoute = "delay_route"
	ActionPress      = "press"
)

// Action is a step taken before the assertion is read.
type Action struct {
	Type      string `json:"type"`
	Selector  string `json:"selector,omitempty"`
	Value     string `json:"value,omitempty"`
	Route     string `json:"route,omitempty"`
	DelayMS   int    `json:"delay_ms,omitempty"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
	// Key is the key a press action presses (a Playwright key name such as "Enter" or
	// "Escape"), on Selector when one is given, else on whatever has focus.
	Key string `json:"key,omitempty"`
}

// Assertion kinds.
const (
	KindLoads                = "loads"
	KindNoHorizontalOverflow = "no_horizontal_overflow"
	KindVisibleText          = "visible_text"
	KindElementPresent       = "element_present"
	KindElementAbsent        = "element_absent"
	KindInViewport           = "in_viewport"
	KindNoConsoleErrors      = "no_console_errors"
	KindNoPageErrors         = "no_page_errors"
	KindMeasure              = "measure"
	KindHTTP                 = "http"
	KindAllOf                = "all_of"
	KindAttribute            = "attribute"
	KindBackground           = "background"
	KindURL                  = "url"
	KindRequest              = "request"
	KindStacked              = "stacked"
	KindPosition             = "position"
	// KindStructure: what a person finds in the page's main region (its headings, links,
	// buttons, images, lists, tables and form controls by role and name, in reading order)
	// equals Expected, an object of the structure the base check observed per viewport
	// ("390x844": "..."). A viewport absent from Expected is not compared: the base check
	// fills it in before the quote (ObsStructure says how names are normalised).
	KindStructure = "structure"
)

// Places a position assertion puts an element.
const (
	PlaceFirstViewport = "first_viewport"
	PlaceLastViewport  = "last_viewport"
)

// Element states for element_present / element_absent.
const (
	StateVisible  = "visible"
	StateAttached = "attached"
)

// Operators for measure and http JSON checks.
const (
	OpLT       = "<"
	OpLE       = "<="
	OpEQ       = "=="
	OpGE       = ">="
	OpGT       = ">"
	OpContains = "contains"
)

// Assertion is what must hold once the actions have run. Fields apply per kind; the schema
// says which are required for which kind.
type Assertion struct {
	Kind string `json:"kind"`

	// visible_text: every text visible, optionally inside elements matching Within.
	// no_horizontal_overflow: with Within, only that part of the page is judged.
	Texts  []string `json:"texts,omitempty"`
	Within string   `json:"within,omitempty"`

	// element_present / element_absent / in_viewport, and the element the attribute,
	// background, stacked and position kinds read.
	Selector string `json:"selector,omitempty"`
	State    string `json:"state,omitempty"`

	// attribute: the first attached match's attribute Name, compared by Operator with
	// Expected (a string; an absent attribute reads as "").
	Name string `json:"name,omitempty"`

	// position: where the first visible match is (Place), and optionally that it ends
	// above the first visible match of Before or starts below that of After.
	Place  string `json:"place,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Beside (position): next to the first visible match of Beside, on its row, with nothing
	// between them (NextToGapPx, NextToRowOverlap).
	Beside string `json:"beside,omitempty"`
	// HasText (position) keeps the matches whose text holds it, ignoring case: the element
	// placed is the one showing these words, not another carrying the same hook.
	HasText string `json:"has_text,omitempty"`

	// request: a request with Method whose path matches Path (a trailing * matches any
	// rest) was made after the criterion's first click, fill or press.
	Path string `json:"path,omitempty"`

	// measure: Expression (a JS expression evaluated in the page) Operator Expected (a JSON
	// literal) or ExpectedFrom (another expression). url: the page's path and query after
	// the actions, Operator Expected. background: the relative luminance (0 black to 1
	// white) of the pixels painted in Selector's box, Operator Expected: read from a screenshot,
	// never from CSS, so a dark background-color under a white image reads as white.
	Expression   string          `json:"expression,omitempty"`
	Operator     string          `json:"operator,omitempty"`
	Expected     json.RawMessage `json:"expected,omitempty"`
	ExpectedFrom string          `json:"expected_from,omitempty"`

	// http: a request to the criterion's route.
	Method string      `json:"method,omitempty"`
	Status int         `json:"status,omitempty"`
	JSON   []JSONCheck `json:"json,omitempty"`

	// all_of: every nested assertion holds.
	AllOf []Assertion `json:"all_of,omitempty"`

	// no_horizontal_overflow (page-wide) at a phone's width: AllowScrollers lets a sideways
	// scroller hold content wider than the viewport (a carousel the goal asks for). Without it
	// such a scroller counts as wide content.
	AllowScrollers bool `json:"allow_scrollers,omitempty"`
}

// JSONCheck compares the value at a JSON pointer of an HTTP response body.
type JSONCheck struct {
	Pointer  string          `json:"pointer"`
	Operator string          `json:"operator"`
	Expected json.RawMessage `json:"expected"`
}
