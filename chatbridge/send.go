package chatbridge

import (
	"context"
	"fmt"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
)

// Send pushes a text (e.g. progress) to an agent in a session, outside any request, and returns
// the message id the peer will acknowledge.
func (b *Bridge) Send(ctx context.Context, to, session, text string) (string, error) {
	return b.SendContent(ctx, to, session, chatproto.TextContent{Text: text})
}

// SendContent pushes a ChatMessage with arbitrary content (e.g. EndSessionContent).
func (b *Bridge) SendContent(ctx context.Context, to, session string, content ...chatproto.Content) (string, error) {
	msg := chatproto.ChatMessage{MsgID: uuid4.New(), Content: content}
	return msg.MsgID, b.SendMessage(ctx, to, session, msg)
}

// SendMessage sends msg as is; a zero Timestamp is set to now. Give a stable MsgID (see
// MessageID) when the caller may retry, e.g. from a Temporal activity, so a peer that dedupes
// by msg_id shows the message once.
func (b *Bridge) SendMessage(ctx context.Context, to, session string, msg chatproto.ChatMessage) error {
	if b.closing.Load() {
		return ErrClosed
	}
	if _, err := uuid4.ParseModel(msg.MsgID); err != nil {
		return fmt.Errorf("chatbridge: msg_id %q: %w", msg.MsgID, err)
	}
	if msg.Timestamp.IsZero() {
		msg.Timestamp = b.cfg.Now()
	}
	if _, err := b.sender.Send(ctx, to, session, msg, chatproto.ProtocolDigest); err != nil {
		return fmt.Errorf("chatbridge: send to %s: %w", to, err)
	}
	return nil
}

// MessageID derives a stable version-4 UUID from a key (e.g. workflow id + step), for
// idempotent sends.
func MessageID(key string) string { return uuid4.FromKey(key) }
