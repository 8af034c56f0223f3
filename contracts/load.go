package contracts

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed schema/*.json
var schemaFS embed.FS

// Schema file names inside the embedded schema folder.
const (
	ContractSchemaFile = "schema/contract.schema.json"
	EvidenceSchemaFile = "schema/evidence.schema.json"
)

// SchemaJSON returns the raw JSON Schema shipped with this build.
func SchemaJSON(name string) ([]byte, error) { return schemaFS.ReadFile(name) }

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
	schemaErr  error
)

func compiled(name string) (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		schemas = map[string]*jsonschema.Schema{}
		for _, n := range []string{ContractSchemaFile, EvidenceSchemaFile} {
			b, err := schemaFS.ReadFile(n)
			if err != nil {
				schemaErr = err
				return
			}
			if err := c.AddResource(n, bytes.NewReader(b)); err != nil {
				schemaErr = fmt.Errorf("schema %s: %w", n, err)
				return
			}
		}
		for _, n := range []string{ContractSchemaFile, EvidenceSchemaFile} {
			s, err := c.Compile(n)
			if err != nil {
				schemaErr = fmt.Errorf("schema %s: %w", n, err)
				return
			}
			schemas[n] = s
		}
	})
	if schemaErr != nil {
		return nil, schemaErr
	}
	return schemas[name], nil
}

// FieldError names one broken rule at a JSON pointer into the document.
type FieldError struct {
	Pointer string `json:"pointer"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

func (e FieldError) String() string {
	p := e.Pointer
	if p == "" {
		p = "(document)"
	}
	return fmt.Sprintf("%s: %s: %s", p, e.Rule, e.Message)
}

// ValidationError is returned for a document that is not a valid contract or evidence. It
// lists every problem found, sorted by pointer.
type ValidationError struct {
	What   string       `json:"what"`
	Errors []FieldError `json:"errors"`
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is invalid", e.What)
	for _, fe := range e.Errors {
		b.WriteString("\n  ")
		b.WriteString(fe.String())
	}
	return b.String()
}

// Has reports whether some error has the pointer and rule.
func (e *ValidationError) Has(pointer, rule string) bool {
	for _, fe := range e.Errors {
		if fe.Pointer == pointer && fe.Rule == rule {
			return true
		}
	}
	return false
}

// LoadOptions relax load-time rules on purpose.
type LoadOptions struct {
	// AllowMoreCriteria lifts the 4-6 criteria bound to the schema's hard limit.
	AllowMoreCriteria bool
}

// Load parses, schema-validates and semantically checks a contract document.
func Load(data []byte, opts LoadOptions) (*Contract, error) {
	doc, err := parseStrict(data, "contract", MaxContractBytes)
	if err != nil {
		return nil, err
	}
	if err := validateSchema(ContractSchemaFile, "contract", doc); err != nil {
		return nil, err
	}
	var c Contract
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, &ValidationError{What: "contract", Errors: []FieldError{{Rule: "decode", Message: err.Error()}}}
	}
	if errs := semanticErrors(&c, opts); len(errs) > 0 {
		sortErrors(errs)
		return nil, &ValidationError{What: "contract", Errors: errs}
	}
	return &c, nil
}

// Validate checks a contract value built in code (the authoring module) by the same rules.
func Validate(c Contract, opts LoadOptions) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = Load(b, opts)
	return err
}

// DecodeEvidence parses and schema-validates verifier evidence. It does not check the
// signature: that is the policy's job, with a key the workflow knows independently.
func DecodeEvidence(data []byte) (*Evidence, error) {
	doc, err := parseStrict(data, "evidence", MaxEvidenceBytes)
	if err != nil {
		return nil, err
	}
	if err := validateSchema(EvidenceSchemaFile, "evidence", doc); err != nil {
		return nil, err
	}
	var e Evidence
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, &ValidationError{What: "evidence", Errors: []FieldError{{Rule: "decode", Message: err.Error()}}}
	}
	return &e, nil
}

// ValidateEvidence schema-checks an evidence value (as the policy receives it).
func ValidateEvidence(e Evidence) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = DecodeEvidence(b)
	return err
}

// RuleLimit is the rule reported for a document over a size or depth limit.
const RuleLimit = "limit"

// parseStrict refuses a document over its size or the depth limit, then what two JSON parsers
// could read differently: invalid UTF-8, duplicate member names, trailing data.
func parseStrict(data []byte, what string, maxBytes int64) (any, error) {
	if err := CheckJSON(data, what, maxBytes, MaxJSONDepth); err != nil {
		return nil, &ValidationError{What: what, Errors: []FieldError{{Rule: RuleLimit, Message: err.Error()}}}
	}
	if _, err := Canonicalize(data); err != nil {
		rule := "json_syntax"
		if strings.Contains(err.Error(), "duplicate member") {
			rule = "duplicate_key"
		}
		return nil, &ValidationError{What: what, Errors: []FieldError{{Rule: rule, Message: err.Error()}}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, &ValidationError{What: what, Errors: []FieldError{{Rule: "json_syntax", Message: err.Error()}}}
	}
	return doc, nil
}

func validateSchema(file, what string, doc any) error {
	s, err := compiled(file)
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var out []FieldError
	collectLeaves(ve, &out)
	sortErrors(out)
	return &ValidationError{What: what, Errors: dedupe(out)}
}

var quoted = regexp.MustCompile(`'([^']*)'`)

// collectLeaves turns the schema library's error tree into field errors whose pointer names
// the offending member (for required and additionalProperties, the member itself).
func collectLeaves(ve *jsonschema.ValidationError, out *[]FieldError) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectLeaves(c, out)
		}
		return
	}
	kw := ve.KeywordLocation
	if i := strings.LastIndex(kw, "/"); i >= 0 {
		kw = kw[i+1:]
	}
	switch kw {
	case "required", "additionalProperties":
		names := quoted.FindAllStringSubmatch(ve.Message, -1)
		for _, n := range names {
			msg := "missing required member"
			if kw == "additionalProperties" {
				msg = "unknown member"
			}
			*out = append(*out, FieldError{Pointer: ve.InstanceLocation + "/" + escapePointer(n[1]), Rule: kw, Message: msg})
		}
		if len(names) > 0 {
			return
		}
	}
	*out = append(*out, FieldError{Pointer: ve.InstanceLocation, Rule: kw, Message: ve.Message})
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sortErrors(errs []FieldError) {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Pointer != errs[j].Pointer {
			return errs[i].Pointer < errs[j].Pointer
		}
		return errs[i].Rule < errs[j].Rule
	})
}

func dedupe(errs []FieldError) []FieldError {
	return slices.CompactFunc(errs, func(a, b FieldError) bool { return a == b })
}

// Semantic rule names, reported with a JSON pointer.
const (
	RuleUniqueID          = "unique_criterion_id"
	RuleCriteriaCount     = "criteria_count"
	RuleRoutePath         = "route_path"
	RuleViewportRequired  = "viewport_required"
	RuleViewportForbidden = "viewport_forbidden"
	RuleExpected          = "expected_literal"
	RuleArtifacts         = "artifacts_applicable"
	RuleSeedKey           = "seed_key"
	RuleLocator           = "role_locator"
	RuleStack             = "stack"
)

func semanticErrors(c *Contract, opts LoadOptions) []FieldError {
	var errs []FieldError
	add := func(ptr, rule, format string, args ...any) {
		errs = append(errs, FieldError{Pointer: ptr, Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	n := len(c.Criteria)
	if n < MinCriteria || (n > MaxCriteria && !opts.AllowMoreCriteria) {
		add("/criteria", RuleCriteriaCount, "a contract has %d to %d criteria, this one has %d (more need an explicit allowance)", MinCriteria, MaxCriteria, n)
	}
	steps := map[string]bool{}
	for i, pf := range c.Stack.Preexisting {
		if steps[pf.Step] {
			add("/stack/preexisting_failures/"+strconv.Itoa(i), RuleStack, "step %q is recorded twice", pf.Step)
		}
		steps[pf.Step] = true
	}
	if len(c.Stack.Env) > MaxPreviewEnv {
		add("/stack/preview_env", RuleStack, "%d preview variables, at most %d", len(c.Stack.Env), MaxPreviewEnv)
	}
	for _, kv := range c.Stack.PreviewEnvWords("") {
		k, v, _ := strings.Cut(kv, "=")
		if msg := PreviewEnvProblem(k, v); msg != "" {
			add("/stack/preview_env/"+k, RuleStack, "%s", msg)
		}
		if strings.Contains(v, PostgresURLRef) && !slices.Contains(c.Stack.Services, ServicePostgres) {
			add("/stack/preview_env/"+k, RuleStack, "%s names %s, but the stack starts no postgres service", k, PostgresURLRef)
		}
	}
	seen := map[string]int{}
	for i, cr := range c.Criteria {
		p := "/criteria/" + strconv.Itoa(i)
		if j, dup := seen[cr.ID]; dup {
			add(p+"/id", RuleUniqueID, "criterion id %q is already used by /criteria/%d", cr.ID, j)
		} else {
			seen[cr.ID] = i
		}
		if msg := routeProblem(cr.Route, false); msg != "" {
			add(p+"/route", RuleRoutePath, "%s", msg)
		}
		isHTTP := cr.Assert.Kind == KindHTTP
		switch {
		case isHTTP && (cr.Viewport != nil || len(cr.ExtraViewports) > 0):
			add(p+"/viewport", RuleViewportForbidden, "an http criterion is checked without a browser and takes no viewport")
		case !isHTTP && cr.Viewport == nil:
			add(p+"/viewport", RuleViewportRequired, "a browser criterion needs a viewport")
		}
		if isHTTP {
			for j, a := range cr.RequiredArtifacts {
				if a != ArtifactObserved {
					add(p+"/required_artifacts/"+strconv.Itoa(j), RuleArtifacts, "an http criterion produces no %s", a)
				}
			}
		}
		for j, a := range cr.Actions {
			ap := p + "/actions/" + strconv.Itoa(j)
			if a.Route != "" {
				if msg := routeProblem(a.Route, a.Type == ActionDelayRoute); msg != "" {
					add(ap+"/route", RuleRoutePath, "%s", msg)
				}
			}
			locatorError(a.Selector, ap+"/selector", add)
		}
		if cr.Seed != nil {
			for k := range cr.Seed.LocalStorage {
				if strings.TrimSpace(k) == "" {
					add(p+"/seed/local_storage", RuleSeedKey, "localStorage keys must not be blank")
				}
			}
		}
		assertionErrors(cr.Assert, p+"/assert", add)
	}
	return errs
}

// locatorError refuses a role locator outside the syntax the verifier reads (CSS is left to
// the browser, which refuses a bad one as a failed read).
func locatorError(sel, ptr string, add func(ptr, rule, format string, args ...any)) {
	if IsRoleLocator(sel) {
		if _, err := ParseRoleLocator(sel); err != nil {
			add(ptr, RuleLocator, "%v", err)
		}
	}
}

func assertionErrors(a Assertion, p string, add func(ptr, rule, format string, args ...any)) {
	for field, sel := range map[string]string{"selector": a.Selector, "within": a.Within, "before": a.Before, "after": a.After, "beside": a.Beside} {
		locatorError(sel, p+"/"+field, add)
	}
	if a.Kind == KindMeasure && len(a.Expected) > 0 {
		if _, err := decodeLiteral(a.Expected); err != nil {
			add(p+"/expected", RuleExpected, "%v", err)
		}
	}
	for i, sub := range a.AllOf {
		if sub.Kind == KindHTTP {
			add(p+"/all_of/"+strconv.Itoa(i)+"/kind", "all_of_member", "an http check cannot be combined with browser checks")
		}
		assertionErrors(sub, p+"/all_of/"+strconv.Itoa(i), add)
	}
}

// routeProblem says why s is not a path on the app under test, or "" if it is one. Criteria
// must never send the verifier anywhere else.
func routeProblem(s string, pattern bool) string {
	switch {
	case !strings.HasPrefix(s, "/"):
		return fmt.Sprintf("route %q must be a path on the app starting with /", s)
	case strings.HasPrefix(s, "//"):
		return fmt.Sprintf("route %q is protocol-relative: it would leave the app", s)
	case strings.Contains(s, "://"):
		return fmt.Sprintf("route %q contains a URL scheme", s)
	case strings.ContainsAny(s, "\\#"):
		return fmt.Sprintf("route %q contains a backslash or a fragment", s)
	case strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return fmt.Sprintf("route %q contains whitespace or control characters", s)
	case !pattern && strings.Contains(s, "*"):
		return fmt.Sprintf("route %q contains a wildcard; only delay_route takes patterns", s)
	}
	path, _, _ := strings.Cut(s, "?")
	for _, seg := range strings.Split(path, "/") {
		if seg == ".." || seg == "." {
			return fmt.Sprintf("route %q contains a dot segment", s)
		}
	}
	return ""
}

// RequiredArtifacts is the set of artifact kinds a criterion's result must carry: the
// contract's evidence policy plus the criterion's own, less what an http check cannot make.
func RequiredArtifacts(c Contract, cr Criterion) []string {
	set := map[string]bool{}
	for _, a := range c.EvidencePolicy.Required {
		set[a] = true
	}
	for _, a := range cr.RequiredArtifacts {
		set[a] = true
	}
	if cr.Assert.Kind == KindHTTP {
		delete(set, ArtifactScreenshot)
		delete(set, ArtifactTrace)
	}
	var out []string
	for _, k := range []string{ArtifactObserved, ArtifactScreenshot, ArtifactTrace} {
		if set[k] {
			out = append(out, k)
		}
	}
	return out
}
