package chatproto

import (
	"reflect"
	"testing"
)

// Decoding arbitrary bytes never panics, and whatever decodes re-encodes to itself.
func FuzzDecodeChatMessage(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": "2025-01-02T03:04:05+00:00", "msg_id": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "content": [{"type": "text", "text": "Hello"}, {"type": "end-session"}]}`,
		`{"content":[{"text":"hi"},{}]}`,
		`{"timestamp":1700000000.5,"content":[{"type":"metadata","metadata":{"a":1e999,"b":false}}]}`,
		`{"content":[{"type":"resource","resource_id":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b","resource":[{"uri":"u","metadata":{}}]}]}`,
		`{"timestamp":"2025-1-2 3:4:5.1234567-0830","content":[{"type":"start-stream","stream_id":"urn:uuid:6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}]}`,
		`[]`, `{"content":null}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeChatMessage(data)
		if err != nil {
			return
		}
		b, err := m.MarshalPython()
		if err != nil {
			t.Fatalf("decoded message does not encode: %v", err)
		}
		again, err := DecodeChatMessage(b)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, again)
		}
	})
}
