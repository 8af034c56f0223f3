package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff/signoff/contracts"
)

// maxHTTPBody bounds what an http criterion reads of a response.
const maxHTTPBody = 8 << 20

// httpCriterion runs an http assertion with Go's HTTP client, no browser: the request goes to
// the preview plus the criterion's route, and the observed values are the status and the JSON
// values at each pointer (null where the pointer does not resolve).
func (r *run) httpCriterion(ctx context.Context, c contracts.Criterion) contracts.CriterionResult {
	start := time.Now()
	res := newResult(c.ID)
	finish := func(status, msg string) contracts.CriterionResult {
		res.Status, res.Error = status, msg
		res.DurationMS = time.Since(start).Milliseconds()
		return res
	}
	budget := time.Duration(c.MaxRuntimeMS) * time.Millisecond
	if budget <= 0 {
		budget = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	a := c.Assert
	method := strings.ToUpper(a.Method)
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, joinRoute(r.base, c.Route), nil)
	if err != nil {
		return finish(contracts.StatusError, "build request: "+err.Error())
	}
	req.Header.Set("Accept", "application/json, */*")
	resp, err := r.v.client().Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return finish(contracts.StatusTimeout, fmt.Sprintf("no response within %d ms", c.MaxRuntimeMS))
		}
		return finish(contracts.StatusError, "request: "+err.Error())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return finish(contracts.StatusTimeout, fmt.Sprintf("response body not read within %d ms", c.MaxRuntimeMS))
		}
		return finish(contracts.StatusError, "read body: "+err.Error())
	}
	res.Observed[contracts.ObsStatus] = float64(resp.StatusCode)

	if len(a.JSON) > 0 {
		var doc any
		var parseErr error
		// Observed values go into evidence, which has its own depth limit: a body nesting
		// deeper than MaxObservedDepth is not JSON the verifier reads.
		if err := contracts.CheckJSON(body, "response body", maxHTTPBody, contracts.MaxObservedDepth); err != nil {
			parseErr = err
		} else if err := json.Unmarshal(body, &doc); err != nil {
			parseErr = err
		}
		for i, jc := range a.JSON {
			key := contracts.JSONValueKey(i)
			if parseErr != nil {
				res.Observed[key] = nil
				continue
			}
			v, err := JSONPointer(doc, jc.Pointer)
			if err != nil {
				res.Observed[key] = nil
				res.Observed[contracts.JSONMissingKey(i)] = err.Error()
				continue
			}
			res.Observed[key] = v
		}
		if parseErr != nil {
			res.Observed[contracts.ObsJSONError] = "response is not JSON: " + parseErr.Error()
		}
	}
	status, problem := judge(c, res.Observed)
	return finish(status, problem)
}

// JSONPointer resolves an RFC 6901 pointer in a decoded JSON document. "" is the whole
// document; "~1" is "/" and "~0" is "~" inside a reference token; array indexes are decimal
// without leading zeros ("-", the past-the-end index, resolves to nothing).
func JSONPointer(doc any, pointer string) (any, error) {
	if pointer == "" {
		return doc, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("json pointer %q must be empty or start with /", pointer)
	}
	cur := doc
	for _, raw := range strings.Split(pointer[1:], "/") {
		tok, err := unescapeToken(raw)
		if err != nil {
			return nil, fmt.Errorf("json pointer %q: %w", pointer, err)
		}
		switch node := cur.(type) {
		case map[string]any:
			v, ok := node[tok]
			if !ok {
				return nil, fmt.Errorf("json pointer %q: no member %q", pointer, tok)
			}
			cur = v
		case []any:
			i, err := arrayIndex(tok)
			if err != nil {
				return nil, fmt.Errorf("json pointer %q: %w", pointer, err)
			}
			if i >= len(node) {
				return nil, fmt.Errorf("json pointer %q: index %d is past the end (%d items)", pointer, i, len(node))
			}
			cur = node[i]
		default:
			return nil, fmt.Errorf("json pointer %q: cannot descend into a %s", pointer, jsonKind(cur))
		}
	}
	return cur, nil
}

func unescapeToken(t string) (string, error) {
	if !strings.Contains(t, "~") {
		return t, nil
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '~' {
			b.WriteByte(t[i])
			continue
		}
		if i+1 >= len(t) || (t[i+1] != '0' && t[i+1] != '1') {
			return "", fmt.Errorf("bad escape in token %q (only ~0 and ~1)", t)
		}
		if t[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), nil
}

func arrayIndex(tok string) (int, error) {
	if tok == "-" {
		return 0, errors.New(`"-" names the element after the last, which does not exist`)
	}
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	return i, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// newResult is a criterion's result before anything is measured, its lists empty rather than
// null so the evidence reads the same whichever way the criterion ran.
func newResult(id string) contracts.CriterionResult {
	return contracts.CriterionResult{
		CriterionID:   id,
		Observed:      map[string]any{},
		Artifacts:     []string{},
		PageErrors:    []string{},
		ConsoleErrors: []string{},
	}
}
