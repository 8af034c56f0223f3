// Package chatbridge makes Signoff an Agent Chat Protocol agent: it serves /submit as the
// uAgents reference does, acknowledges every ChatMessage, hands the text to a Conversation
// and sends the replies back as separately signed envelopes. It knows nothing about
// workflows; the Conversation implementation does.
package chatbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
)

// Inbound is one ChatMessage from a signature-verified agent.
type Inbound struct {
	Sender    string // agent1... address; replies go here
	Session   string // envelope session UUID: the conversation to map to a contract
	MsgID     string
	Timestamp time.Time
	// Text is the concatenation of the TextContent parts (ChatMessage.text()).
	Text string
	// StartSession / EndSession report the session markers in the message.
	StartSession, EndSession bool
	// Metadata merges every MetadataContent (later keys win); nil when none.
	Metadata  map[string]string
	Resources []chatproto.Resource
}

// Conversation is what the bridge drives; the workflow layer implements it.
type Conversation interface {
	// OnText handles one message. Each returned text is sent back, in order, as its own
	// ChatMessage in the same session. Return quickly: long work should answer with a short
	// acknowledgement and push progress later through Bridge.Send. An error whose text is safe
	// to show should be a *UserError; any other error is logged and the user gets a generic
	// apology.
	OnText(ctx context.Context, in Inbound) ([]string, error)
}

// Ack is a ChatAcknowledgement received for a message the bridge sent.
type Ack struct {
	Sender, Session, MsgID string
	Timestamp              time.Time
}

// AckObserver may be implemented by a Conversation to learn which sent messages (by the
// MsgID Bridge.Send returned) the peer acknowledged.
type AckObserver interface {
	OnAck(ctx context.Context, ack Ack)
}

// UserError carries a message that may be shown to the chat user as is.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

// GenericFailure is sent when the Conversation fails with an error that is not a UserError.
const GenericFailure = "Sorry, something went wrong while handling that message. Please try again."

// UnverifiedSenderText is the reference's ErrorMessage for user... senders on signed handlers.
const UnverifiedSenderText = "Message must be sent from verified agent address"

// Config wires a Bridge.
type Config struct {
	Identity     *identity.Identity // the agent's key (required)
	Conversation Conversation       // required
	// Resolver finds where replies to a sender go (Almanac API, local registry, static map).
	Resolver transport.Resolver
	// HTTPClient for outbound envelopes; default 10 s timeout.
	HTTPClient *http.Client
	// Retry bounds outbound delivery (default 5 attempts, 250ms doubling to 5s).
	Retry transport.Retry
	// Path of the submit endpoint; default "/submit".
	Path string
	// MaxBody caps inbound bodies; default transport.DefaultMaxBody (256 KiB) -> 413.
	MaxBody int64
	// Workers handling messages concurrently (default 8) and queued jobs beyond them (default
	// 256); when the queue is full, /submit answers 503 so the sender retries later.
	Workers, Queue int
	// HandlerTimeout bounds one OnText call; default 2 minutes.
	HandlerTimeout time.Duration
	// DedupeTTL is how long a (sender, msg_id) pair is remembered; default 24h.
	DedupeTTL time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Bridge is the chat endpoint. It is an http.Handler for the submit path.
type Bridge struct {
	cfg    Config
	log    *slog.Logger
	sender *transport.Sender
	inbox  *transport.Inbox
	seen   *dedupe

	jobs    chan func(context.Context)
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.RWMutex // guards closed against sends on jobs
	closed  bool
	closing atomic.Bool
}

// ErrBusy is returned by Deliver when the work queue is full; it wraps
// transport.ErrRetryLater.
var ErrBusy = fmt.Errorf("chatbridge: busy: %w", transport.ErrRetryLater)

// ErrClosed is returned after Close; it wraps transport.ErrRetryLater.
var ErrClosed = fmt.Errorf("chatbridge: closed: %w", transport.ErrRetryLater)

// New validates cfg and starts the workers.
func New(cfg Config) (*Bridge, error) {
	if cfg.Identity == nil {
		return nil, errors.New("chatbridge: Identity is required")
	}
	if cfg.Conversation == nil {
		return nil, errors.New("chatbridge: Conversation is required")
	}
	if cfg.Resolver == nil {
		return nil, errors.New("chatbridge: Resolver is required (replies are separate envelopes)")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	if cfg.HandlerTimeout <= 0 {
		cfg.HandlerTimeout = 2 * time.Minute
	}
	if cfg.DedupeTTL <= 0 {
		cfg.DedupeTTL = 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bridge{
		cfg: cfg,
		log: log.With("agent", cfg.Identity.Address()),
		sender: &transport.Sender{
			Identity: cfg.Identity, Resolver: cfg.Resolver, Client: cfg.HTTPClient,
			Retry: cfg.Retry, Now: cfg.Now,
		},
		seen: newDedupe(cfg.DedupeTTL, 100_000),
		jobs: make(chan func(context.Context), cfg.Queue),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.inbox = &transport.Inbox{
		Hosts:   func(a string) bool { return a == cfg.Identity.Address() },
		Deliver: b.accept,
		Path:    cfg.Path,
		MaxBody: cfg.MaxBody,
		Ready:   func() bool { return !b.closing.Load() },
	}
	for range cfg.Workers {
		b.wg.Add(1)
		go b.work()
	}
	return b, nil
}

// Address is the bridge's agent address.
func (b *Bridge) Address() string { return b.cfg.Identity.Address() }

// ServeHTTP serves the submit path (POST envelopes, HEAD readiness) with the reference's
// statuses and bodies.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.inbox.ServeHTTP(w, r) }

// Deliver processes an envelope that arrived another way (the Agentverse mailbox): the same
// checks as /submit (signature unless from a user... address, target), then dispatch.
func (b *Bridge) Deliver(ctx context.Context, env *envelope.Envelope) error {
	if !identity.IsUserAddress(env.Sender) {
		if err := env.Verify(); err != nil {
			return fmt.Errorf("chatbridge: envelope from %s: %w", env.Sender, err)
		}
	}
	if env.Target != b.Address() {
		return errors.New("chatbridge: unable to route envelope")
	}
	return b.accept(ctx, env)
}

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

// Close stops accepting messages (readiness turns not-ready, /submit answers 503) and waits
// for queued work until ctx ends, after which in-flight handlers are cancelled.
func (b *Bridge) Close(ctx context.Context) error {
	b.closing.Store(true)
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.jobs)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		b.cancel()
		return nil
	case <-ctx.Done():
		b.cancel()
		<-done
		return ctx.Err()
	}
}

func (b *Bridge) work() {
	defer b.wg.Done()
	for job := range b.jobs {
		job(b.ctx)
	}
}

func (b *Bridge) enqueue(job func(context.Context)) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return ErrClosed
	}
	select {
	case b.jobs <- job:
		return nil
	default:
		return ErrBusy
	}
}

// accept runs after the envelope passed the HTTP checks: it parses the payload synchronously
// (cheap) and queues everything that talks to the network or the Conversation.
func (b *Bridge) accept(_ context.Context, env *envelope.Envelope) error {
	log := b.log.With("sender", env.Sender, "session", env.Session, "schema", env.SchemaDigest)
	payload, err := env.DecodePayload()
	if err != nil {
		log.Warn("undecodable payload", "err", err)
		return b.enqueue(func(ctx context.Context) {
			b.sendError(ctx, env, chatproto.NonConformingText(err))
		})
	}
	switch env.SchemaDigest {
	case chatproto.ChatMessageDigest:
		msg, err := chatproto.DecodeChatMessage(payload)
		if err != nil {
			log.Warn("chat message does not conform", "err", err)
			return b.enqueue(func(ctx context.Context) { b.sendError(ctx, env, chatproto.NonConformingText(err)) })
		}
		if identity.IsUserAddress(env.Sender) {
			return b.enqueue(func(ctx context.Context) { b.sendError(ctx, env, UnverifiedSenderText) })
		}
		if !b.seen.add(env.Sender+"/"+msg.MsgID, b.cfg.Now()) {
			log.Info("duplicate chat message ignored", "msg_id", msg.MsgID)
			return nil
		}
		err = b.enqueue(func(ctx context.Context) { b.handleChat(ctx, env, msg) })
		if err != nil {
			b.seen.remove(env.Sender + "/" + msg.MsgID) // let the sender's retry through
		}
		return err
	case chatproto.ChatAcknowledgementDigest:
		ack, err := chatproto.DecodeAcknowledgement(payload)
		if err != nil {
			return b.enqueue(func(ctx context.Context) { b.sendError(ctx, env, chatproto.NonConformingText(err)) })
		}
		if identity.IsUserAddress(env.Sender) {
			return b.enqueue(func(ctx context.Context) { b.sendError(ctx, env, UnverifiedSenderText) })
		}
		if obs, ok := b.cfg.Conversation.(AckObserver); ok {
			return b.enqueue(func(ctx context.Context) {
				obs.OnAck(ctx, Ack{Sender: env.Sender, Session: env.Session, MsgID: ack.AcknowledgedMsgID, Timestamp: ack.Timestamp})
			})
		}
		log.Debug("acknowledgement received", "msg_id", ack.AcknowledgedMsgID)
		return nil
	case chatproto.ErrorMessageDigest:
		em, err := chatproto.DecodeErrorMessage(payload)
		if err == nil {
			log.Warn("peer reported an error", "error", em.Error)
		}
		return nil
	default:
		// The reference logs and drops messages for models it does not know.
		log.Warn("unrecognized schema digest")
		return nil
	}
}

func (b *Bridge) handleChat(ctx context.Context, env *envelope.Envelope, msg *chatproto.ChatMessage) {
	log := b.log.With("sender", env.Sender, "session", env.Session, "msg_id", msg.MsgID)
	ack := chatproto.ChatAcknowledgement{Timestamp: b.cfg.Now(), AcknowledgedMsgID: msg.MsgID}
	if _, err := b.sender.Send(ctx, env.Sender, env.Session, ack, chatproto.ProtocolDigest); err != nil {
		log.Warn("acknowledgement not delivered", "err", err)
	}
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
	for _, text := range replies {
		reply := chatproto.ChatMessage{Timestamp: b.cfg.Now(), MsgID: uuid4.New(), Content: []chatproto.Content{chatproto.TextContent{Text: text}}}
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

// dedupe remembers keys for a TTL, bounded in size (oldest evicted first).
type dedupe struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	at    map[string]time.Time
	order []seenKey // insertion order; entries whose time no longer matches are stale
}

type seenKey struct {
	key string
	at  time.Time
}

func newDedupe(ttl time.Duration, max int) *dedupe {
	return &dedupe{ttl: ttl, max: max, at: map[string]time.Time{}}
}

// add records key and reports whether it was new (or its previous sighting expired).
func (d *dedupe) add(key string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.order) > 0 {
		o := d.order[0]
		t, live := d.at[o.key]
		live = live && t.Equal(o.at)
		if live && now.Sub(o.at) < d.ttl && len(d.at) < d.max {
			break
		}
		if live {
			delete(d.at, o.key)
		}
		d.order = d.order[1:]
	}
	if t, ok := d.at[key]; ok && now.Sub(t) < d.ttl {
		return false
	}
	d.at[key] = now
	d.order = append(d.order, seenKey{key, now})
	return true
}

// remove forgets key (used when its message could not be queued, so a retry is not a duplicate).
func (d *dedupe) remove(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.at, key)
}
