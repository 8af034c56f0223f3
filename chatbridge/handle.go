package chatbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/transport"
)

// acknowledged logs a ChatMessage's acknowledgement with the bridge's own latency figures
// (receive to ack on the wire, receive to delivery done) and tells Config.OnAcknowledged.
func (b *Bridge) acknowledged(log *slog.Logger, t AckTiming) {
	ms := func(at time.Time) float64 {
		if at.IsZero() {
			return -1
		}
		return float64(at.Sub(t.Received).Microseconds()) / 1000
	}
	if t.Err != nil {
		log.Warn("acknowledgement not delivered", "msg_id", t.MsgID, "err", t.Err, "wire_ms", ms(t.Wire), "done_ms", ms(t.Done))
	} else {
		log.Info("chat message acknowledged", "msg_id", t.MsgID, "wire_ms", ms(t.Wire), "done_ms", ms(t.Done),
			"acked_at", t.Done.UTC().Format(time.RFC3339Nano), "received_at", t.Received.UTC().Format(time.RFC3339Nano))
	}
	if b.cfg.OnAcknowledged != nil {
		b.cfg.OnAcknowledged(t)
	}
}

func (b *Bridge) handleChat(ctx context.Context, env *envelope.Envelope, msg *chatproto.ChatMessage, key string, acked <-chan struct{}) {
	log := b.log.With("sender", env.Sender, "session", env.Session, "msg_id", msg.MsgID)
	in := Inbound{
		Sender: env.Sender, Session: env.Session, MsgID: msg.MsgID, Timestamp: msg.Timestamp,
		Text: msg.Text(), StartSession: msg.Has(chatproto.TypeStartSession), EndSession: msg.Has(chatproto.TypeEndSession),
	}
	for _, c := range msg.Content {
		switch c := c.(type) {
		case chatproto.MetadataContent:
			if in.Metadata == nil {
				in.Metadata = map[string]string{}
			}
			for k, v := range c.Metadata {
				in.Metadata[k] = v
			}
		case chatproto.ResourceContent:
			in.Resources = append(in.Resources, c.Resources...)
		}
	}
	if acked != nil {
		select { // the acknowledgement goes first, before any work for the message starts
		case <-acked:
		case <-ctx.Done():
			return // shutting down: not handled, so the next start hands it over again
		}
	}
	hctx, cancel := context.WithTimeout(ctx, b.cfg.HandlerTimeout)
	replies, err := b.cfg.Conversation.OnText(hctx, in)
	cancel()
	if err != nil {
		var ue *UserError
		if errors.As(err, &ue) {
			replies = []string{ue.Msg}
		} else {
			log.Error("conversation failed", "err", err)
			replies = []string{GenericFailure}
		}
	}
	if ctx.Err() != nil {
		return // shutting down: not handled, so the next start hands it over again
	}
	// Handled once its replies are out (or undeliverable): a restart before that hands the
	// message over again.
	defer b.seen.handled(key)
	for i, text := range replies {
		// Stable ids: a message handed over again after a restart repeats the same replies,
		// which a peer deduping by msg_id shows once.
		reply := chatproto.ChatMessage{Timestamp: b.cfg.Now(), MsgID: MessageID(fmt.Sprintf("reply/%s/%d", key, i)),
			Content: []chatproto.Content{chatproto.TextContent{Text: text}}}
		if _, err := b.sender.Send(ctx, env.Sender, env.Session, reply, chatproto.ProtocolDigest); err != nil {
			log.Warn("reply not delivered", "err", err)
			return
		}
	}
}

// sendError answers a message the bridge cannot handle. One attempt only: such senders are
// often throwaway or unreachable, and retries would let them tie up the workers.
func (b *Bridge) sendError(ctx context.Context, env *envelope.Envelope, text string) {
	once := *b.sender
	once.Retry = transport.Retry{Attempts: 1}
	if _, err := once.Send(ctx, env.Sender, env.Session, chatproto.ErrorMessage{Error: text}, chatproto.ProtocolDigest); err != nil {
		b.log.Warn("error message not delivered", "sender", env.Sender, "err", err)
	}
}
