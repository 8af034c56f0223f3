package chatproto

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/signoff/signoff/chatbridge/internal/pyjson"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/contracts"
)

// SchemaError is a message that a Python peer's pydantic model would reject. Its text follows
// pydantic's "N validation error(s) for Model" summary.
type SchemaError struct {
	Model    string
	Problems []string
}

func (e *SchemaError) Error() string {
	noun := "errors"
	if len(e.Problems) == 1 {
		noun = "error"
	}
	return fmt.Sprintf("%d validation %s for %s: %s", len(e.Problems), noun, e.Model, strings.Join(e.Problems, "; "))
}

// NonConformingText is the ErrorMessage text uagents sends back for a message that fails its
// model (agent.py: "Message does not conform to expected schema: {ex}").
func NonConformingText(err error) string {
	return "Message does not conform to expected schema: " + PeerText(err)
}

// MaxPeerText bounds the error text a peer is sent: a huge field it sent is not echoed whole.
const MaxPeerText = 300

// internalPrefixes are this program's package names that error chains start with; a peer
// gains nothing from them.
var internalPrefixes = []string{"pyjson: ", "envelope: ", "chatproto: ", "identity: ", "uuid4: "}

// PeerText is an error as a chat peer reads it: without this program's package prefixes, and
// cut at MaxPeerText characters with a note of how much was left out.
func PeerText(err error) string {
	s := err.Error()
	for _, p := range internalPrefixes {
		s = strings.ReplaceAll(s, p, "")
	}
	return Shorten(s, MaxPeerText)
}

// Shorten cuts s at max characters, saying how many were left out: what a chat reply repeats
// of a peer's own input stays bounded.
func Shorten(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return fmt.Sprintf("%s… (%d more characters)", string(r[:max]), len(r)-max)
	}
	return s
}

// DecodeChatMessage parses a ChatMessage the way the reference's ChatMessage.parse_raw does:
// content is required; a missing or empty msg_id or timestamp is filled in (uuid4 / now);
// unknown keys, unknown content types and non-v4 ids are rejected.
func DecodeChatMessage(data []byte) (*ChatMessage, error) {
	obj, err := object("ChatMessage", data)
	if err != nil {
		return nil, err
	}
	se := &SchemaError{Model: "ChatMessage"}
	if k := unknownKey(obj, "timestamp", "msg_id", "content"); k != "" {
		se.Problems = append(se.Problems, fmt.Sprintf("unexpected keyword argument %q", k))
		return nil, se
	}
	m := &ChatMessage{}
	m.Timestamp, err = defaultedTimestamp(obj["timestamp"])
	if err != nil {
		se.Problems = append(se.Problems, "timestamp: "+err.Error())
	}
	if m.MsgID, err = defaultedUUID(obj["msg_id"]); err != nil {
		se.Problems = append(se.Problems, "msg_id: "+err.Error())
	}
	raw, present := obj["content"]
	list, isList := raw.([]any)
	switch {
	case !present:
		se.Problems = append(se.Problems, "content: missing required argument")
	case raw == nil:
		se.Problems = append(se.Problems, "content: none is not an allowed value")
	case !isList:
		se.Problems = append(se.Problems, "content: value is not a valid list")
	default:
		for i, item := range list {
			c, err := decodeContent(item)
			if err != nil {
				se.Problems = append(se.Problems, fmt.Sprintf("content -> %d: %v", i, err))
				continue
			}
			m.Content = append(m.Content, c)
		}
	}
	if len(se.Problems) > 0 {
		return nil, se
	}
	if m.Content == nil {
		m.Content = []Content{}
	}
	return m, nil
}

// DecodeAcknowledgement parses a ChatAcknowledgement (acknowledged_msg_id required).
func DecodeAcknowledgement(data []byte) (*ChatAcknowledgement, error) {
	obj, err := object("ChatAcknowledgement", data)
	if err != nil {
		return nil, err
	}
	se := &SchemaError{Model: "ChatAcknowledgement"}
	if k := unknownKey(obj, "timestamp", "acknowledged_msg_id", "metadata"); k != "" {
		se.Problems = append(se.Problems, fmt.Sprintf("unexpected keyword argument %q", k))
		return nil, se
	}
	a := &ChatAcknowledgement{}
	if a.Timestamp, err = defaultedTimestamp(obj["timestamp"]); err != nil {
		se.Problems = append(se.Problems, "timestamp: "+err.Error())
	}
	if v, ok := obj["acknowledged_msg_id"]; !ok {
		se.Problems = append(se.Problems, "acknowledged_msg_id: missing required argument")
	} else if a.AcknowledgedMsgID, err = modelUUID(v); err != nil {
		se.Problems = append(se.Problems, "acknowledged_msg_id: "+err.Error())
	}
	if v := obj["metadata"]; v != nil {
		if a.Metadata, err = strMap(v); err != nil {
			se.Problems = append(se.Problems, "metadata: "+err.Error())
		}
	}
	if len(se.Problems) > 0 {
		return nil, se
	}
	return a, nil
}

// DecodeErrorMessage parses the built-in ErrorMessage (a plain pydantic model: extra keys ignored).
func DecodeErrorMessage(data []byte) (*ErrorMessage, error) {
	obj, err := object("ErrorMessage", data)
	if err != nil {
		return nil, err
	}
	s, err := coerceStr(obj["error"])
	if err != nil {
		return nil, &SchemaError{Model: "ErrorMessage", Problems: []string{"error: " + err.Error()}}
	}
	return &ErrorMessage{Error: s}, nil
}

func object(model string, data []byte) (map[string]any, error) {
	v, err := pyjson.Decode(data)
	if err != nil {
		problem := "invalid JSON"
		if contracts.IsLimitError(err) {
			problem = err.Error() // say which limit, so a refused message is not a mystery
		}
		return nil, &SchemaError{Model: model, Problems: []string{problem}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &SchemaError{Model: model, Problems: []string{"value is not a valid dict"}}
	}
	return obj, nil
}

func unknownKey(obj map[string]any, allowed ...string) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			return k
		}
	}
	return ""
}

// contentShape describes one union member's __init__: the keyword arguments it accepts and
// which are required (type always defaults to the literal).
type contentShape struct {
	typ      string
	required []string
	build    func(obj map[string]any) (Content, error)
}

// Union members in the reference's declaration order; pydantic v1 takes the first that fits.
var contentShapes = []contentShape{
	{TypeText, []string{"text"}, func(o map[string]any) (Content, error) {
		s, err := coerceStr(o["text"])
		if err != nil {
			return nil, fmt.Errorf("text: %w", err)
		}
		return TextContent{Text: s}, nil
	}},
	{TypeResource, []string{"resource_id", "resource"}, func(o map[string]any) (Content, error) {
		id, err := modelUUID(o["resource_id"])
		if err != nil {
			return nil, fmt.Errorf("resource_id: %w", err)
		}
		c := ResourceContent{ResourceID: id}
		switch r := o["resource"].(type) {
		case map[string]any:
			res, err := decodeResource(r)
			if err != nil {
				return nil, fmt.Errorf("resource: %w", err)
			}
			c.Resources = []Resource{res}
		case []any:
			c.List = true
			for i, item := range r {
				m, ok := item.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("resource -> %d: value is not a valid dict", i)
				}
				res, err := decodeResource(m)
				if err != nil {
					return nil, fmt.Errorf("resource -> %d: %w", i, err)
				}
				c.Resources = append(c.Resources, res)
			}
		default:
			return nil, errors.New("resource: value is not a valid dict or list")
		}
		return c, nil
	}},
	{TypeMetadata, []string{"metadata"}, func(o map[string]any) (Content, error) {
		m, err := strMap(o["metadata"])
		if err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		return MetadataContent{Metadata: m}, nil
	}},
	{TypeStartSession, nil, func(map[string]any) (Content, error) { return StartSessionContent{}, nil }},
	{TypeEndSession, nil, func(map[string]any) (Content, error) { return EndSessionContent{}, nil }},
	{TypeStartStream, []string{"stream_id"}, func(o map[string]any) (Content, error) {
		id, err := modelUUID(o["stream_id"])
		if err != nil {
			return nil, fmt.Errorf("stream_id: %w", err)
		}
		return StartStreamContent{StreamID: id}, nil
	}},
	{TypeEndStream, []string{"stream_id"}, func(o map[string]any) (Content, error) {
		id, err := modelUUID(o["stream_id"])
		if err != nil {
			return nil, fmt.Errorf("stream_id: %w", err)
		}
		return EndStreamContent{StreamID: id}, nil
	}},
}

func decodeContent(item any) (Content, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return nil, errors.New("value is not a valid dict")
	}
	var reasons []string
	for _, shape := range contentShapes {
		c, err := shape.try(obj)
		if err == nil {
			return c, nil
		}
		reasons = append(reasons, err.Error())
	}
	if t, ok := obj["type"].(string); ok && !knownType(t) {
		return nil, fmt.Errorf("unknown content type %q", t)
	}
	return nil, fmt.Errorf("matches no content model (%s)", strings.Join(reasons, "; "))
}

func (s contentShape) try(obj map[string]any) (Content, error) {
	allowed := append([]string{"type"}, s.required...)
	if k := unknownKey(obj, allowed...); k != "" {
		return nil, fmt.Errorf("%s: unexpected keyword argument %q", s.typ, k)
	}
	for _, r := range s.required {
		if _, ok := obj[r]; !ok {
			return nil, fmt.Errorf("%s: missing argument %q", s.typ, r)
		}
	}
	if t, ok := obj["type"]; ok && t != s.typ {
		return nil, fmt.Errorf("%s: unexpected value; permitted: %q", s.typ, s.typ)
	}
	c, err := s.build(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.typ, err)
	}
	return c, nil
}

func knownType(t string) bool {
	for _, s := range contentShapes {
		if s.typ == t {
			return true
		}
	}
	return false
}

// decodeResource follows a plain pydantic v1 model: uri and metadata required, extras ignored.
func decodeResource(o map[string]any) (Resource, error) {
	uri, err := coerceStr(o["uri"])
	if err != nil {
		return Resource{}, fmt.Errorf("uri: %w", err)
	}
	md, err := strMap(o["metadata"])
	if err != nil {
		return Resource{}, fmt.Errorf("metadata: %w", err)
	}
	return Resource{URI: uri, Metadata: md}, nil
}

// coerceStr is pydantic v1's str validator: strings, and numbers (bools included) via str().
func coerceStr(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		s, err := pyjson.Number(x)
		switch s { // str(float) spells infinities differently from json.dumps
		case "Infinity":
			s = "inf"
		case "-Infinity":
			s = "-inf"
		}
		return s, err
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case nil:
		return "", errors.New("none is not an allowed value")
	}
	return "", errors.New("str type expected")
}

func strMap(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil, errors.New("none is not an allowed value")
		}
		return nil, errors.New("value is not a valid dict")
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		s, err := coerceStr(val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

func modelUUID(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errors.New("value is not a valid uuid")
	}
	return uuid4.ParseModel(s)
}

// falsy mirrors Python truthiness for the `x or default` fallbacks in the models' __init__.
func falsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func defaultedUUID(v any) (string, error) {
	if falsy(v) {
		return uuid4.New(), nil
	}
	return modelUUID(v)
}

func defaultedTimestamp(v any) (time.Time, error) {
	if falsy(v) {
		return time.Now().UTC().Truncate(time.Microsecond), nil // Python datetimes hold microseconds
	}
	return ParseTimestamp(v)
}

// pydantic v1's datetime_re.
var datetimeRE = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6})\d{0,6})?)?(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// ParseTimestamp accepts what pydantic v1's parse_datetime accepts: ISO-8601-like strings with
// optional seconds, fraction and zone (naive values are taken as UTC; results are in UTC), and unix seconds (or
// milliseconds above 2e10) as numbers or numeric strings.
func ParseTimestamp(v any) (time.Time, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	default:
		return time.Time{}, errors.New("invalid datetime format")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return time.Time{}, errors.New("invalid datetime format")
		}
		if math.Abs(f) > 2e10 {
			f /= 1000
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC(), nil
	}
	m := datetimeRE.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, errors.New("invalid datetime format")
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	micro := 0
	if m[7] != "" {
		micro, _ = strconv.Atoi((m[7] + "000000")[:6])
	}
	loc := time.UTC
	if z := m[8]; z != "" && z != "Z" {
		digits := strings.ReplaceAll(z[1:], ":", "")
		h, _ := strconv.Atoi(digits[:2])
		mins := 0
		if len(digits) == 4 {
			mins, _ = strconv.Atoi(digits[2:])
		}
		off := h*3600 + mins*60
		if z[0] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	mo, d, h, mi, sec := n(2), n(3), n(4), n(5), 0
	if m[6] != "" {
		sec = n(6)
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, errors.New("invalid datetime format")
	}
	t := time.Date(n(1), time.Month(mo), d, h, mi, sec, micro*1000, loc)
	if t.Day() != d { // e.g. 2025-02-30 normalised by Go; Python rejects it
		return time.Time{}, errors.New("invalid datetime format")
	}
	return t.UTC(), nil
}

// ModelDigest is "model:" + sha256 of a model's canonical schema JSON (build_schema_digest).
func ModelDigest(schemaJSON []byte) string {
	sum := sha256.Sum256(schemaJSON)
	return "model:" + hex.EncodeToString(sum[:])
}

// ComputeProtocolDigest recomputes a protocol digest from its manifest as
// ProtocolSpecification.compute_digest does: metadata emptied, models sorted by digest,
// interactions by request, then sha256 of json.dumps(sort_keys=True).
func ComputeProtocolDigest(manifest []byte) (digest string, canonical []byte, err error) {
	v, err := pyjson.Decode(manifest)
	if err != nil {
		return "", nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", nil, errors.New("chatproto: manifest is not an object")
	}
	models, _ := m["models"].([]any)
	sort.SliceStable(models, func(i, j int) bool { return field(models[i], "digest") < field(models[j], "digest") })
	inter, _ := m["interactions"].([]any)
	sort.SliceStable(inter, func(i, j int) bool { return field(inter[i], "request") < field(inter[j], "request") })
	hashed := map[string]any{"version": m["version"], "metadata": map[string]any{}, "models": models, "interactions": inter}
	canonical, err = pyjson.Marshal(hashed, pyjson.SpacedSorted)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(canonical)
	return "proto:" + hex.EncodeToString(sum[:]), canonical, nil
}

func field(v any, k string) string {
	m, _ := v.(map[string]any)
	s, _ := m[k].(string)
	return s
}
