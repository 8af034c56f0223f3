package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Limits on every JSON document Signoff reads from outside. Each is generous for what a real
// document of its kind holds and finite, so a hostile one is refused with an error naming the
// limit instead of exhausting the stack, memory or CPU.
const (
	// MaxJSONDepth bounds the nesting of any document: arrays and objects opened and not yet
	// closed. Contracts, evidence and bundles nest about ten deep.
	MaxJSONDepth = 128
	// MaxObservedDepth bounds a JSON value the verifier takes from a preview (an http
	// criterion's response body). Observed values are embedded in evidence, so they get half of
	// MaxJSONDepth and the evidence around them stays within it.
	MaxObservedDepth = MaxJSONDepth / 2

	MaxContractBytes   = 1 << 20   // a contract document
	MaxQuoteBytes      = 2 << 20   // a quote file: a contract plus price and base-check facts
	MaxEvidenceBytes   = 32 << 20  // signed verifier evidence (observed values, artifact lists)
	MaxBundleBytes     = 32 << 20  // a signed proof bundle (timeline, digests)
	MaxSettlementBytes = 1 << 20   // a signed settlement record
	MaxChatBytes       = 256 << 10 // one chat envelope or chat-protocol message
	MaxWebhookBytes    = 25 << 20  // one webhook delivery: GitHub's own cap (payments use less)
	MaxObservedBytes   = 1 << 20   // a JSON body read from a preview by the verifier
)

// LimitError says which limit a document broke. Callers test for it with errors.As.
type LimitError struct {
	What  string // the kind of document, e.g. "contract"
	Limit string // "depth" or "size"
	Max   int64  // the limit: levels of nesting or bytes
}

func (e *LimitError) Error() string {
	if e.Limit == "depth" {
		return fmt.Sprintf("%s: JSON nesting deeper than the limit of %d levels", e.What, e.Max)
	}
	return fmt.Sprintf("%s: larger than the limit of %d bytes", e.What, e.Max)
}

// CheckJSON refuses data longer than maxBytes or nesting deeper than maxDepth, reading it once
// as a token stream and keeping only a counter, so its cost is linear and its stack flat
// whatever the input. It runs before any real decode (which may recurse). Syntax errors are
// left to that decode to report; CheckJSON stops at the first one without failing.
func CheckJSON(data []byte, what string, maxBytes int64, maxDepth int) error {
	if int64(len(data)) > maxBytes {
		return &LimitError{What: what, Limit: "size", Max: maxBytes}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or a syntax error the decoder proper reports with context
		}
		d, ok := tok.(json.Delim)
		if !ok {
			continue
		}
		switch d {
		case '{', '[':
			depth++
			if depth > maxDepth {
				return &LimitError{What: what, Limit: "depth", Max: int64(maxDepth)}
			}
		default:
			depth--
		}
	}
}

// ReadJSON reads at most maxBytes from r and checks the result with CheckJSON, so a reader
// that never ends costs maxBytes of memory at most.
func ReadJSON(r io.Reader, what string, maxBytes int64, maxDepth int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", what, err)
	}
	if err := CheckJSON(data, what, maxBytes, maxDepth); err != nil {
		return nil, err
	}
	return data, nil
}

// IsLimitError reports whether err (or one it wraps) is a *LimitError.
func IsLimitError(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}
