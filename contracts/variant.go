package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Variant is a lazy implementation of a contract's goal that Signoff makes itself, on the
// base commit's served page, before the contract is quoted: the hooks and texts the criteria
// look for put on elements that were already there or on inert ones, the new element at the
// wrong place, the change made on the wrong page. A contract that a variant satisfies cannot
// tell lazy work from the goal, and is not offered. The variant is a declarative list of
// edits that the verifier's browser applies to every page it loads (it is never built, and
// no repository code writes it).
type Variant struct {
	// Name is the kind of laziness: one of the Variant* names.
	Name string `json:"name"`
	// Says what the variant does, for the quote ("puts [data-testid=…] on existing blocks").
	Says string      `json:"says"`
	Ops  []VariantOp `json:"ops"`
}

// Variant names.
const (
	// VariantHooks puts every test hook the criteria use on elements the base already has.
	VariantHooks = "hooks-on-existing"
	// VariantInert adds every control and text the criteria look for, with no behaviour.
	VariantInert = "inert-controls"
	// VariantWrongPlace adds the element a position criterion places at the other end.
	VariantWrongPlace = "wrong-position"
	// VariantCopies adds stacked copies of the elements a layout criterion names by role
	// and name, leaving the originals as they were.
	VariantCopies = "copies-elsewhere"
	// VariantOtherPage makes a heading change on the page asked for and on the other pages.
	VariantOtherPage = "other-pages-too"
)

// VariantOp is one edit of a variant.
type VariantOp struct {
	// Op is VariantOpHook, VariantOpInsert or VariantOpRetext.
	Op string `json:"op"`
	// Route limits the edit to pages at this path ("" every page).
	Route string `json:"route,omitempty"`
	// Attr and Value: the attribute a hook sets, or one an inserted element carries.
	Attr  string `json:"attr,omitempty"`
	Value string `json:"value,omitempty"`
	// Count is how many existing blocks of the main region a hook goes on (default 1).
	Count int `json:"count,omitempty"`
	// Tag, Role and Text describe an inserted element; Text is also a retext's new heading.
	Tag  string `json:"tag,omitempty"`
	Role string `json:"role,omitempty"`
	Text string `json:"text,omitempty"`
	// Where an inserted element goes: VariantStart or VariantEnd of the main region.
	Where string `json:"where,omitempty"`
}

// Variant edits and places.
const (
	VariantOpHook   = "hook"
	VariantOpInsert = "insert"
	VariantOpRetext = "retext"
	VariantStart    = "start"
	VariantEnd      = "end"
)

// Limits of a variant: it is Signoff's own, but it crosses the verify queue.
const (
	MaxVariantOps  = 64
	MaxVariantText = 300
)

var (
	variantNameRe = regexp.MustCompile(`^[a-z][a-z-]{0,39}$`)
	variantAttrRe = regexp.MustCompile(`^(?:data-[a-z0-9][a-z0-9_.-]{0,62}|id|name|aria-label|class)$`)
	variantTags   = map[string]bool{"a": true, "button": true, "p": true, "div": true, "span": true, "h1": true, "h2": true, "input": true, "section": true, "li": true}
)

// ValidateVariant checks what a verifier will apply: known edits only, bounded sizes, tags
// and attributes from a short list (no script, no event handler, no style).
func ValidateVariant(v Variant) error {
	if !variantNameRe.MatchString(v.Name) {
		return fmt.Errorf("variant name %q is not [a-z-]", v.Name)
	}
	if len(v.Says) > 2*MaxVariantText || !utf8.ValidString(v.Says) {
		return fmt.Errorf("variant %s: says is over %d bytes or not UTF-8", v.Name, 2*MaxVariantText)
	}
	if len(v.Ops) == 0 || len(v.Ops) > MaxVariantOps {
		return fmt.Errorf("variant %s: %d edits (1 to %d)", v.Name, len(v.Ops), MaxVariantOps)
	}
	for i, op := range v.Ops {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("variant %s edit %d: %s", v.Name, i+1, fmt.Sprintf(format, a...))
		}
		for _, s := range []string{op.Route, op.Value, op.Text, op.Role} {
			if len(s) > MaxVariantText || !utf8.ValidString(s) {
				return bad("a field is over %d bytes or not UTF-8", MaxVariantText)
			}
		}
		if op.Route != "" && (op.Route[0] != '/' || len(op.Route) > 200) {
			return bad("route %q is not a path", op.Route)
		}
		if op.Attr != "" && !variantAttrRe.MatchString(op.Attr) {
			return bad("attribute %q is not one a variant may set", op.Attr)
		}
		if op.Count < 0 || op.Count > 8 {
			return bad("count %d is not 0 to 8", op.Count)
		}
		switch op.Op {
		case VariantOpHook:
			if op.Attr == "" {
				return bad("a hook needs an attribute")
			}
		case VariantOpInsert:
			if !variantTags[op.Tag] {
				return bad("tag %q is not one a variant may insert", op.Tag)
			}
			if op.Where != VariantStart && op.Where != VariantEnd {
				return bad("where %q is not start or end", op.Where)
			}
		case VariantOpRetext:
			if op.Text == "" {
				return bad("a retext needs the new text")
			}
		default:
			return bad("unknown edit %q", op.Op)
		}
	}
	return nil
}

// VariantID is how evidence names the variant it measured: its name and the digest of its
// edits, so two variants of one name are never confused.
func VariantID(v Variant) string {
	b, _ := json.Marshal(v.Ops)
	sum := sha256.Sum256(b)
	return v.Name + "@" + hex.EncodeToString(sum[:8])
}

// VariantOutcome is what a contract's criteria made of one lazy variant in the base check.
type VariantOutcome struct {
	Name string `json:"name"`
	Says string `json:"says"`
	// Rejected is true when at least one criterion failed on the variant: the contract tells
	// it from the goal. A variant every criterion passes on is what the contract cannot tell.
	Rejected bool `json:"rejected"`
	// FailedBy lists the criteria that failed on it, with what they observed.
	FailedBy []string `json:"failed_by,omitempty"`
	// Error says why the variant could not be measured (it counts as neither).
	Error string `json:"error,omitempty"`
	// ProofDir holds the variant's signed evidence, screenshots and traces.
	ProofDir string `json:"proof_dir,omitempty"`
}

// VariantSummary is one line per variant outcome, as the timeline records it:
// "hooks-on-existing: rejected by a, b".
func VariantSummary(outs []VariantOutcome) string {
	lines := make([]string, 0, len(outs))
	for _, o := range outs {
		switch {
		case o.Rejected:
			ids := make([]string, 0, len(o.FailedBy))
			for _, f := range o.FailedBy {
				id, _, _ := strings.Cut(f, ":")
				ids = append(ids, id)
			}
			lines = append(lines, o.Name+": rejected by "+strings.Join(ids, ", "))
		case o.Error != "":
			lines = append(lines, o.Name+": not measured")
		default:
			lines = append(lines, o.Name+": accepted")
		}
	}
	return strings.Join(lines, "; ")
}
