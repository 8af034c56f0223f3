package transport

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
)

// A nesting bomb as an envelope, and as the chat message inside one, is refused with the limit
// named; the inbox answers 400 as for any invalid payload.
func TestChatContentBombsAreRefused(t *testing.T) {
	bomb := contractstest.DepthBomb(200 << 10) // under MaxChatBytes: only the depth refuses it

	_, err := envelope.Decode(bomb)
	if !errors.Is(err, envelope.ErrInvalidJSON) || !contracts.IsLimitError(err) {
		t.Fatalf("envelope.Decode: %v, want ErrInvalidJSON naming the depth limit", err)
	}
	_, err = chatproto.DecodeChatMessage(bomb)
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than the limit") {
		t.Fatalf("DecodeChatMessage: %v, want the depth limit named", err)
	}
	_, err = envelope.Decode(contractstest.SizeBomb(contracts.MaxChatBytes))
	if !contracts.IsLimitError(err) {
		t.Fatalf("envelope.Decode of an oversize body: %v, want a size LimitError", err)
	}

	inbox := &Inbox{Hosts: func(string) bool { return true }, Deliver: (&recorder{}).deliver}
	req := httptest.NewRequest(http.MethodPost, "/submit", strings.NewReader(string(bomb)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	inbox.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("inbox: %d %s, want 400", rec.Code, rec.Body)
	}
}
