// Package chatproto is the Agent Chat Protocol (uagents_core/contrib/protocols/chat): its
// models with the reference's exact JSON keys, their schema digests, the protocol digest and
// manifest. Encoding reproduces pydantic v1's .json() bytes; decoding accepts and rejects what
// a Python peer would.
package chatproto

import (
	_ "embed"
	"time"

	"github.com/signoff/signoff/chatbridge/internal/pyjson"
)

// Digests the reference computes from its pydantic v1 schemas (model_digests.json,
// chat_protocol.json). Tests recompute each one from the exact schema text.
const (
	ProtocolName    = "AgentChatProtocol"
	ProtocolVersion = "0.3.0"
	ProtocolDigest  = "proto:30a801ed3a83f9a0ff0a9f1e6fe958cb91da1fc2218b153df7b6cbf87bd33d62"

	ChatMessageDigest         = "model:2601825997203ee07dbb9ff6e7c71ae7bdaf6a7c8b817361f2f88f4b29c68d0c"
	ChatAcknowledgementDigest = "model:741eb75692abbeb43c131e364ad939af23f14e8288ba0ec3df130843ef79bd7f"
	ErrorMessageDigest        = "model:94cb082f79871c5e80a20637f935d233f0ce11a135d5a3a3c6071e81102a84d5"

	// Content models never appear in envelopes; listed for completeness and tests.
	TextContentDigest         = "model:50bcb5f3d3b7f1d4a3b0500532273aeb1c430b63889cd5fdc4b5d0b43be68017"
	ResourceDigest            = "model:0b1c7cf812fac142339652b978cd7e67738df22608fb2b9c93af06a968e52ed9"
	ResourceContentDigest     = "model:8ba2dbb911b8468264f09b80afd17e0c01a43ac3dde105fcff5214612749b576"
	MetadataContentDigest     = "model:31e9c7e512d83a1921e819f2b79fddf8c9a5d36bf7d3de5c68e698fd5f65307c"
	StartSessionContentDigest = "model:a0001e7228379eb9789ff42f30a1d3c48150df2e6ae4e6b20997812a1a4fd877"
	EndSessionContentDigest   = "model:6c6952327d4cdb7cfd4a00765cb87fdc8cfaa34d48a346282b14be46fb83ae17"
	StartStreamContentDigest  = "model:6ebcf576f49dcea5d36bc6c17d18472a4fb3ff6006d90b5b55550a781c14b02c"
	EndStreamContentDigest    = "model:61e56a59cf21859e5636b17cdf4e7b8ebe82152498371058d8422fd2d8ccc194"
)

// manifestJSON is the chat protocol manifest exactly as ProtocolSpecification.manifest()
// returns it (chat_protocol.json); POSTed to /v1/almanac/manifests.
//
//go:embed manifest.json
var manifestJSON []byte

// Manifest returns a copy of the chat protocol manifest JSON.
func Manifest() []byte { return append([]byte(nil), manifestJSON...) }

// Message is a model that can travel in an envelope.
type Message interface {
	// SchemaDigest is the envelope's schema_digest for this model.
	SchemaDigest() string
	// MarshalPython returns the JSON pydantic v1 .json() would write for this value.
	MarshalPython() ([]byte, error)
}

// ChatMessage is one turn of a chat. Replies are new ChatMessages with fresh ids.
type ChatMessage struct {
	Timestamp time.Time
	MsgID     string // version-4 UUID
	Content   []Content
}

// ChatAcknowledgement confirms receipt of a ChatMessage; the protocol's only spec reply.
type ChatAcknowledgement struct {
	Timestamp         time.Time
	AcknowledgedMsgID string
	Metadata          map[string]string // nil is written as null, as uagents sends it
}

// ErrorMessage is the built-in model a uagents peer sends when it cannot handle a message.
type ErrorMessage struct {
	Error string
}

// Content is one element of ChatMessage.Content.
type Content interface {
	// Type is the content's "type" discriminator.
	Type() string
	obj() pyjson.Obj
}

// TextContent is text (markdown allowed).
type TextContent struct{ Text string }

// ResourceContent references one resource, or a list whose first element is primary.
type ResourceContent struct {
	ResourceID string // version-4 UUID
	Resources  []Resource
	// List selects the list form on the wire even for a single resource.
	List bool
}

// Resource is a URI with string metadata (conventional keys: mime_type, role).
type Resource struct {
	URI      string
	Metadata map[string]string
}

// MetadataContent carries key/value hints (also used for interactive cards).
type MetadataContent struct{ Metadata map[string]string }

// StartSessionContent opens a session.
type StartSessionContent struct{}

// EndSessionContent closes a session.
type EndSessionContent struct{}

// StartStreamContent opens a stream.
type StartStreamContent struct{ StreamID string }

// EndStreamContent closes a stream.
type EndStreamContent struct{ StreamID string }

// Content type discriminators.
const (
	TypeText         = "text"
	TypeResource     = "resource"
	TypeMetadata     = "metadata"
	TypeStartSession = "start-session"
	TypeEndSession   = "end-session"
	TypeStartStream  = "start-stream"
	TypeEndStream    = "end-stream"
)

func (TextContent) Type() string         { return TypeText }
func (ResourceContent) Type() string     { return TypeResource }
func (MetadataContent) Type() string     { return TypeMetadata }
func (StartSessionContent) Type() string { return TypeStartSession }
func (EndSessionContent) Type() string   { return TypeEndSession }
func (StartStreamContent) Type() string  { return TypeStartStream }
func (EndStreamContent) Type() string    { return TypeEndStream }

func (c TextContent) obj() pyjson.Obj {
	return pyjson.Obj{{K: "type", V: TypeText}, {K: "text", V: c.Text}}
}

func (c ResourceContent) obj() pyjson.Obj {
	var res any
	if c.List || len(c.Resources) != 1 {
		list := make([]any, len(c.Resources))
		for i, r := range c.Resources {
			list[i] = r.obj()
		}
		res = list
	} else {
		res = c.Resources[0].obj()
	}
	return pyjson.Obj{{K: "type", V: TypeResource}, {K: "resource_id", V: c.ResourceID}, {K: "resource", V: res}}
}

func (r Resource) obj() pyjson.Obj {
	return pyjson.Obj{{K: "uri", V: r.URI}, {K: "metadata", V: nonNil(r.Metadata)}}
}

func (c MetadataContent) obj() pyjson.Obj {
	return pyjson.Obj{{K: "type", V: TypeMetadata}, {K: "metadata", V: nonNil(c.Metadata)}}
}

func (StartSessionContent) obj() pyjson.Obj { return pyjson.Obj{{K: "type", V: TypeStartSession}} }
func (EndSessionContent) obj() pyjson.Obj   { return pyjson.Obj{{K: "type", V: TypeEndSession}} }

func (c StartStreamContent) obj() pyjson.Obj {
	return pyjson.Obj{{K: "type", V: TypeStartStream}, {K: "stream_id", V: c.StreamID}}
}

func (c EndStreamContent) obj() pyjson.Obj {
	return pyjson.Obj{{K: "type", V: TypeEndStream}, {K: "stream_id", V: c.StreamID}}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// SchemaDigest implements Message.
func (ChatMessage) SchemaDigest() string { return ChatMessageDigest }

// SchemaDigest implements Message.
func (ChatAcknowledgement) SchemaDigest() string { return ChatAcknowledgementDigest }

// SchemaDigest implements Message.
func (ErrorMessage) SchemaDigest() string { return ErrorMessageDigest }

// MarshalPython implements Message: {"timestamp": ..., "msg_id": ..., "content": [...]}.
func (m ChatMessage) MarshalPython() ([]byte, error) {
	content := make([]any, len(m.Content))
	for i, c := range m.Content {
		content[i] = c.obj()
	}
	return pyjson.Marshal(pyjson.Obj{
		{K: "timestamp", V: FormatTimestamp(m.Timestamp)},
		{K: "msg_id", V: m.MsgID},
		{K: "content", V: content},
	}, pyjson.Spaced)
}

// MarshalPython implements Message.
func (a ChatAcknowledgement) MarshalPython() ([]byte, error) {
	var md any
	if a.Metadata != nil {
		md = a.Metadata
	}
	return pyjson.Marshal(pyjson.Obj{
		{K: "timestamp", V: FormatTimestamp(a.Timestamp)},
		{K: "acknowledged_msg_id", V: a.AcknowledgedMsgID},
		{K: "metadata", V: md},
	}, pyjson.Spaced)
}

// MarshalPython implements Message.
func (e ErrorMessage) MarshalPython() ([]byte, error) {
	return pyjson.Marshal(pyjson.Obj{{K: "error", V: e.Error}}, pyjson.Spaced)
}

// Text concatenates the TextContent parts, as ChatMessage.text() does.
func (m ChatMessage) Text() string {
	var s string
	for _, c := range m.Content {
		if t, ok := c.(TextContent); ok {
			s += t.Text
		}
	}
	return s
}

// Has reports whether the message carries a content of the given type.
func (m ChatMessage) Has(contentType string) bool {
	for _, c := range m.Content {
		if c.Type() == contentType {
			return true
		}
	}
	return false
}

// FormatTimestamp writes t as Python's datetime.isoformat() for an aware UTC datetime:
// 2025-01-02T03:04:05+00:00, with .ffffff only when there are microseconds.
func FormatTimestamp(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}
