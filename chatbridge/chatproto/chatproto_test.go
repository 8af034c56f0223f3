package chatproto

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/internal/pyjson"
)

func readVectors(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

var digestConstants = map[string]string{
	"ErrorMessage":        ErrorMessageDigest,
	"TextContent":         TextContentDigest,
	"Resource":            ResourceDigest,
	"ResourceContent":     ResourceContentDigest,
	"MetadataContent":     MetadataContentDigest,
	"StartSessionContent": StartSessionContentDigest,
	"EndSessionContent":   EndSessionContentDigest,
	"StartStreamContent":  StartStreamContentDigest,
	"EndStreamContent":    EndStreamContentDigest,
	"ChatMessage":         ChatMessageDigest,
	"ChatAcknowledgement": ChatAcknowledgementDigest,
	// Upstream python/tests/test_model.py target, checks the digest recipe itself.
	"SuperImportantCheck": "model:21e34819ee8106722968c39fdafc104bab0866f1c73c71fd4d2475be285605e9",
}

func TestModelDigestVectors(t *testing.T) {
	var f struct {
		Vectors []struct {
			Model, Digest string
			SchemaJSON    string `json:"schema_json"`
		}
	}
	readVectors(t, "model_digests.json", &f)
	if len(f.Vectors) != len(digestConstants) {
		t.Fatalf("vectors: %d, constants: %d", len(f.Vectors), len(digestConstants))
	}
	for _, v := range f.Vectors {
		if got := ModelDigest([]byte(v.SchemaJSON)); got != v.Digest {
			t.Errorf("%s: sha256(schema) = %s, want %s", v.Model, got, v.Digest)
		}
		if digestConstants[v.Model] != v.Digest {
			t.Errorf("%s: constant %s, vector %s", v.Model, digestConstants[v.Model], v.Digest)
		}
		// The schema text is exactly json.dumps(sort_keys=True) of itself: pyjson reproduces it.
		g, err := pyjson.Decode([]byte(v.SchemaJSON))
		if err != nil {
			t.Fatal(err)
		}
		again, err := pyjson.Marshal(g, pyjson.SpacedSorted)
		if err != nil || string(again) != v.SchemaJSON {
			t.Errorf("%s: pyjson re-encoding differs:\n%s\n%s", v.Model, again, v.SchemaJSON)
		}
	}
}

func TestProtocolDigestAndManifest(t *testing.T) {
	var f struct {
		Name, Version, Digest string
		Canonical             string          `json:"digest_input_canonical_json"`
		Manifest              json.RawMessage `json:"manifest"`
	}
	readVectors(t, "chat_protocol.json", &f)
	if f.Name != ProtocolName || f.Version != ProtocolVersion || f.Digest != ProtocolDigest {
		t.Fatalf("constants differ from vector: %s %s %s", f.Name, f.Version, f.Digest)
	}
	digest, canonical, err := ComputeProtocolDigest(Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if string(canonical) != f.Canonical {
		t.Fatalf("canonical JSON differs (%d vs %d bytes)", len(canonical), len(f.Canonical))
	}
	if digest != ProtocolDigest {
		t.Fatalf("protocol digest %s, want %s", digest, ProtocolDigest)
	}
	var ours, theirs any
	_ = json.Unmarshal(Manifest(), &ours)
	_ = json.Unmarshal(f.Manifest, &theirs)
	if !reflect.DeepEqual(ours, theirs) {
		t.Fatal("embedded manifest differs from the vector")
	}
	// Each model digest in the manifest is recomputed from its schema.
	var m struct {
		Models []struct {
			Digest string
			Schema json.RawMessage
		}
	}
	_ = json.Unmarshal(Manifest(), &m)
	want := map[string]bool{ChatMessageDigest: true, ChatAcknowledgementDigest: true}
	for _, model := range m.Models {
		g, _ := pyjson.Decode(model.Schema)
		canon, _ := pyjson.Marshal(g, pyjson.SpacedSorted)
		if got := ModelDigest(canon); got != model.Digest || !want[got] {
			t.Errorf("manifest model digest %s recomputed as %s", model.Digest, got)
		}
	}
	// A different interaction set changes the digest (the check is not vacuous).
	changed := strings.Replace(string(Manifest()), `"responses": []`, `"responses": ["`+ErrorMessageDigest+`"]`, 1)
	if d, _, _ := ComputeProtocolDigest([]byte(changed)); d == ProtocolDigest {
		t.Fatal("digest insensitive to interactions")
	}
}

func TestPayloadVectorsByteExact(t *testing.T) {
	var f struct {
		Vectors []struct {
			Name        string
			PayloadJSON *string `json:"payload_json"`
		}
	}
	readVectors(t, "envelopes.json", &f)
	msg := ChatMessage{
		Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		MsgID:     "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b",
		Content:   []Content{TextContent{Text: "Hello from the test vector"}, EndSessionContent{}},
	}
	ack := ChatAcknowledgement{Timestamp: time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC), AcknowledgedMsgID: msg.MsgID}
	for i, m := range []Message{msg, ack} {
		got, err := m.MarshalPython()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != *f.Vectors[i].PayloadJSON {
			t.Errorf("%s:\n got %s\nwant %s", f.Vectors[i].Name, got, *f.Vectors[i].PayloadJSON)
		}
	}
	back, err := DecodeChatMessage([]byte(*f.Vectors[0].PayloadJSON))
	if err != nil || !reflect.DeepEqual(*back, msg) {
		t.Fatalf("decode chat message: %+v %v", back, err)
	}
	backAck, err := DecodeAcknowledgement([]byte(*f.Vectors[1].PayloadJSON))
	if err != nil || !reflect.DeepEqual(*backAck, ack) {
		t.Fatalf("decode ack: %+v %v", backAck, err)
	}
}

// Output recorded from uagents-core 0.4.12: ChatMessage(content=[TextContent(text='hé 🚀 <&>')]).json()
func TestEncodingMatchesRecordedPython(t *testing.T) {
	m := ChatMessage{
		Timestamp: time.Date(2026, 11, 29, 22, 28, 49, 339051000, time.UTC),
		MsgID:     "3defea06-baa1-4aef-923d-980106067374",
		Content:   []Content{TextContent{Text: "hé 🚀 <&>"}},
	}
	got, _ := m.MarshalPython()
	want := `{"timestamp": "2026-11-29T22:28:49.339051+00:00", "msg_id": "3defea06-baa1-4aef-923d-980106067374", "content": [{"type": "text", "text": "h\u00e9 \ud83d\ude80 <&>"}]}`
	if string(got) != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	res := ChatMessage{Timestamp: time.Date(2026, 11, 29, 22, 29, 52, 616726000, time.UTC), MsgID: "3dd83257-a1fe-4ca5-9e38-890b706f652b",
		Content: []Content{ResourceContent{ResourceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", Resources: []Resource{{URI: "u"}}, List: true}}}
	got, _ = res.MarshalPython()
	want = `{"timestamp": "2026-11-29T22:29:52.616726+00:00", "msg_id": "3dd83257-a1fe-4ca5-9e38-890b706f652b", "content": [{"type": "resource", "resource_id": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "resource": [{"uri": "u", "metadata": {}}]}]}`
	if string(got) != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	e, _ := ErrorMessage{Error: "bad"}.MarshalPython()
	if string(e) != `{"error": "bad"}` {
		t.Fatalf("error message: %s", e)
	}
}

// Accept/reject decisions recorded from ChatMessage.parse_raw in uagents-core 0.4.12.
func TestDecodeLikeReference(t *testing.T) {
	accept := map[string]string{
		`{"content":[{"text":"hi"},{}]}`: `[{"type": "text", "text": "hi"}, {"type": "start-session"}]`,
		`{"timestamp":"2025-01-02 03:04:05","content":[{"type":"metadata","metadata":{"a":1,"b":true}}]}`:                                                               `[{"type": "metadata", "metadata": {"a": "1", "b": "True"}}]`,
		`{"timestamp":1700000000,"content":[]}`:                                                                                                                         `[]`,
		`{"content":[{"type":"resource","resource_id":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b","resource":{"uri":"u","metadata":{},"x":1}}]}`:                             `[{"type": "resource", "resource_id": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "resource": {"uri": "u", "metadata": {}}}]`,
		`{"content":[{"type":"start-stream","stream_id":"6F1C2A3B4D5E4F608A7B9C0D1E2F3A4B"},{"type":"end-stream","stream_id":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}]}`: `[{"type": "start-stream", "stream_id": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}, {"type": "end-stream", "stream_id": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}]`,
	}
	for in, wantContent := range accept {
		m, err := DecodeChatMessage([]byte(in))
		if err != nil {
			t.Errorf("%s rejected: %v", in, err)
			continue
		}
		out, _ := m.MarshalPython()
		if !strings.Contains(string(out), `"content": `+wantContent+`}`) {
			t.Errorf("%s re-encoded as %s", in, out)
		}
	}
	ts, _ := DecodeChatMessage([]byte(`{"timestamp":1700000000,"content":[]}`))
	if FormatTimestamp(ts.Timestamp) != "2023-11-14T22:13:20+00:00" {
		t.Errorf("unix timestamp parsed as %s", FormatTimestamp(ts.Timestamp))
	}
	reject := []string{
		`{"content":[],"foo":1}`,
		`{"content":[{"type":"image","url":"x"}]}`,
		`{"msg_id":"6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b","content":[]}`,
		`[]`,
		`{"content":null}`,
		`{"msg_id":"x"}`,
		`{"content":[{"type":"text","text":"a","extra":1}]}`,
		`{"content":[{"type":"text"}]}`,
		`{"content":[{"type":"resource","resource_id":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b","resource":{"uri":"u"}}]}`,
		`{"timestamp":"yesterday","content":[]}`,
	}
	for _, in := range reject {
		if m, err := DecodeChatMessage([]byte(in)); err == nil {
			t.Errorf("%s accepted as %+v", in, m)
		}
	}
	_, err := DecodeChatMessage([]byte(`{"content":[{"type":"image","url":"x"}]}`))
	if !strings.Contains(err.Error(), `unknown content type "image"`) || !strings.HasPrefix(NonConformingText(err), "Message does not conform to expected schema: 1 validation error for ChatMessage") {
		t.Errorf("error text: %v", err)
	}
	if _, err := DecodeAcknowledgement([]byte(`{"timestamp":"2025-01-02T03:04:06+00:00"}`)); err == nil {
		t.Error("ack without acknowledged_msg_id accepted")
	}
}

func TestAllContentTypesRoundTrip(t *testing.T) {
	id := "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	m := ChatMessage{
		Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC),
		MsgID:     id,
		Content: []Content{
			StartSessionContent{},
			TextContent{Text: "line\n\"quoted\""},
			ResourceContent{ResourceID: id, Resources: []Resource{{URI: "https://x/y.png", Metadata: map[string]string{"mime_type": "image/png", "role": "image"}}}},
			ResourceContent{ResourceID: id, List: true, Resources: []Resource{{URI: "a", Metadata: map[string]string{}}, {URI: "b", Metadata: map[string]string{}}}},
			MetadataContent{Metadata: map[string]string{"card_kind": "quote"}},
			StartStreamContent{StreamID: id},
			EndStreamContent{StreamID: id},
			EndSessionContent{},
		},
	}
	b, err := m.MarshalPython()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeChatMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, m) {
		t.Fatalf("round trip:\n%+v\n%+v", *back, m)
	}
	if m.Text() != "line\n\"quoted\"" || !m.Has(TypeEndSession) || m.Has("nope") {
		t.Fatal("Text/Has")
	}
}
