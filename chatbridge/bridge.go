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
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
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
	// DedupeTTL is how long a (sender, session, msg_id) key is remembered; default 24h. A
	// ChatMessage whose own timestamp is older than this is refused as stale, so a capture
	// cannot outlive the dedupe that would recognise it.
	DedupeTTL time.Duration
	// JournalFile keeps the dedupe keys and the accepted-but-unhandled messages across
	// restarts (see Resume); "" keeps them in memory only.
	JournalFile string
	// OnAcknowledged, when set, is called once per accepted ChatMessage when its
	// acknowledgement is out (delivered, given up on, or written in a sync response), before
	// the Conversation sees the message. Tests and benchmarks read the bridge's own
	// receive-to-ack latency from it; it must return quickly.
	OnAcknowledged func(AckTiming)
	Logger         *slog.Logger
	Now            func() time.Time
}

// AckTiming is when the bridge received a ChatMessage and acknowledged it, by the process's
// monotonic clock (not Config.Now).
type AckTiming struct {
	Sender, Session, MsgID string
	// Received is when the request reached the submit handler.
	Received time.Time
	// Wire is when the acknowledgement was written to the peer's connection (for a sync
	// connection: when the response carrying it was written); zero if it never was.
	Wire time.Time
	// Done is when delivery finished: the peer answered, or the retries gave up (Err).
	Done time.Time
	Err  error
}

// Bridge is the chat endpoint. It is an http.Handler for the submit path.
type Bridge struct {
	cfg    Config
	log    *slog.Logger
	sender *transport.Sender
	inbox  *transport.Inbox
	seen   *journal

	jobs    chan func(context.Context)
	acks    chan func(context.Context)
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
		jobs: make(chan func(context.Context), cfg.Queue),
		acks: make(chan func(context.Context), cfg.Queue),
	}
	seen, err := openJournal(cfg.JournalFile, cfg.DedupeTTL, 100_000, cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("chatbridge: journal: %w", err)
	}
	b.seen = seen
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.inbox = &transport.Inbox{
		Hosts:   func(a string) bool { return a == cfg.Identity.Address() },
		Deliver: func(ctx context.Context, env *envelope.Envelope) error { return b.accept(ctx, env, nil) },
		Respond: b.respond,
		Path:    cfg.Path,
		MaxBody: cfg.MaxBody,
		Ready:   func() bool { return !b.closing.Load() },
	}
	for range cfg.Workers {
		b.wg.Add(1)
		go b.work(b.jobs)
	}
	// Acknowledgements have their own workers, so a peer hears at once that its message
	// arrived however long the handlers of earlier messages take.
	for range ackWorkers {
		b.wg.Add(1)
		go b.work(b.acks)
	}
	return b, nil
}

const ackWorkers = 32

// Resume hands the Conversation the messages that were accepted before a restart but whose
// handling had not finished. Call it once the Conversation is ready to send.
func (b *Bridge) Resume() {
	for _, raw := range b.seen.pending() {
		env, err := envelope.Decode(raw)
		if err != nil {
			continue
		}
		payload, err := env.DecodePayload()
		if err != nil {
			continue
		}
		msg, err := chatproto.DecodeChatMessage(payload)
		if err != nil {
			continue
		}
		b.log.Info("resuming a message accepted before the restart", "sender", env.Sender, "msg_id", msg.MsgID)
		key := dedupeKey(env, msg.MsgID)
		if err := b.enqueue(b.jobs, func(ctx context.Context) { b.handleChat(ctx, env, msg, key, nil) }); err != nil {
			b.log.Warn("resumed message not queued", "err", err)
		}
	}
}

// Address is the bridge's agent address.
func (b *Bridge) Address() string { return b.cfg.Identity.Address() }

// ServeHTTP serves the submit path (POST envelopes, HEAD readiness) with the reference's
// statuses and bodies.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &request{received: time.Now()}
	b.inbox.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, req)))
	if req.written != nil {
		req.written() // the response (a sync acknowledgement) is out
	}
}

// request is what the bridge notes about one /submit request.
type request struct {
	received time.Time
	written  func() // run once the response has been written
}

type requestKey struct{}

func requestOf(ctx context.Context) *request {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r
	}
	return &request{received: time.Now()} // Deliver: from the mailbox, not /submit
}

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
	return b.accept(ctx, env, nil)
}

// Close stops accepting messages (readiness turns not-ready, /submit answers 503) and waits
// for queued work until ctx ends, after which in-flight handlers are cancelled.
func (b *Bridge) Close(ctx context.Context) error {
	b.closing.Store(true)
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.jobs)
		close(b.acks)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	defer b.seen.close()
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

func (b *Bridge) work(jobs <-chan func(context.Context)) {
	defer b.wg.Done()
	for job := range jobs {
		job(b.ctx)
	}
}

func (b *Bridge) enqueue(jobs chan func(context.Context), job func(context.Context)) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return ErrClosed
	}
	select {
	case jobs <- job:
		return nil
	default:
		return ErrBusy
	}
}

// syncReply is where accept puts the answer to a sync connection (x-uagents-connection: sync):
// the first message the handler sends back, which the reference returns in the HTTP response
// instead of as a separate envelope.
type syncReply struct{ msg chatproto.Message }

// accept runs after the envelope passed the HTTP checks: it parses the payload synchronously
// (cheap), drops expired and replayed envelopes (the sender still gets the reference's 200 {}),
// journals what it keeps, and queues everything that talks to the network or the Conversation.
// With sync non-nil the acknowledgement (or error) is left there for the HTTP response.
func (b *Bridge) accept(ctx context.Context, env *envelope.Envelope, sync *syncReply) error {
	log := b.log.With("sender", env.Sender, "session", env.Session, "schema", env.SchemaDigest)
	now := b.cfg.Now()
	req := requestOf(ctx)
	fail := func(text string) error {
		if sync != nil {
			sync.msg = chatproto.ErrorMessage{Error: text}
			return nil
		}
		return b.enqueue(b.acks, func(ctx context.Context) { b.sendError(ctx, env, text) })
	}
	if env.Expires != nil && now.Unix() > *env.Expires {
		// The reference never looks at expires on an asynchronous envelope; we drop it, so a
		// captured envelope posted again later changes nothing. A sync sender gets the
		// reference's answer to a query that outlived its expiry.
		log.Info("expired envelope dropped", "expires", *env.Expires)
		if sync != nil {
			sync.msg = chatproto.ErrorMessage{Error: QueryExpiredText}
		}
		return nil
	}
	payload, err := env.DecodePayload()
	if err != nil {
		log.Warn("undecodable payload", "err", err)
		return fail(chatproto.NonConformingText(err))
	}
	switch env.SchemaDigest {
	case chatproto.ChatMessageDigest:
		msg, err := chatproto.DecodeChatMessage(payload)
		if err != nil {
			log.Warn("chat message does not conform", "err", err)
			return fail(chatproto.NonConformingText(err))
		}
		if identity.IsUserAddress(env.Sender) {
			return fail(UnverifiedSenderText)
		}
		ack := chatproto.ChatAcknowledgement{Timestamp: now, AcknowledgedMsgID: msg.MsgID}
		if !msg.Timestamp.IsZero() && now.Sub(msg.Timestamp) >= b.cfg.DedupeTTL {
			log.Info("stale chat message dropped", "msg_id", msg.MsgID, "timestamp", msg.Timestamp)
			return nil
		}
		raw, err := env.Encode()
		if err != nil {
			return err
		}
		key := dedupeKey(env, msg.MsgID)
		fresh, err := b.seen.accept(key, raw, now)
		if err != nil {
			log.Error("journal write failed", "err", err)
			return ErrBusy
		}
		if !fresh {
			log.Info("duplicate chat message ignored", "msg_id", msg.MsgID)
			if sync != nil {
				sync.msg = ack // the same answer the first delivery got
			}
			return nil
		}
		// The acknowledgement goes out before anything else happens to the message: handleChat
		// waits for acked before the Conversation (and so Temporal) sees it, so neither slow
		// handlers nor the work a message starts can delay a peer's ack.
		acked := make(chan struct{})
		timing := AckTiming{Sender: env.Sender, Session: env.Session, MsgID: msg.MsgID, Received: req.received}
		if sync != nil {
			sync.msg = ack
			req.written = func() {
				timing.Wire = time.Now()
				timing.Done = timing.Wire
				b.acknowledged(log, timing)
				close(acked)
			}
		} else if err := b.enqueue(b.acks, func(ctx context.Context) {
			defer close(acked)
			var wire atomic.Int64
			tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
				wire.CompareAndSwap(0, time.Now().UnixNano())
			}})
			_, timing.Err = b.sender.Send(tctx, env.Sender, env.Session, ack, chatproto.ProtocolDigest)
			timing.Done = time.Now()
			if w := wire.Load(); w != 0 {
				timing.Wire = time.Unix(0, w)
			}
			b.acknowledged(log, timing)
		}); err != nil {
			b.seen.forget(key)
			return err
		}
		err = b.enqueue(b.jobs, func(ctx context.Context) { b.handleChat(ctx, env, msg, key, acked) })
		if err != nil {
			b.seen.forget(key) // let the sender's retry through
			req.written = nil  // the answer is 503, not the acknowledgement
		}
		return err
	case chatproto.ChatAcknowledgementDigest:
		ack, err := chatproto.DecodeAcknowledgement(payload)
		if err != nil {
			return fail(chatproto.NonConformingText(err))
		}
		if identity.IsUserAddress(env.Sender) {
			return fail(UnverifiedSenderText)
		}
		if obs, ok := b.cfg.Conversation.(AckObserver); ok {
			return b.enqueue(b.acks, func(ctx context.Context) {
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

// QueryExpiredText is the reference's ErrorMessage for a sync envelope past its expiry.
const QueryExpiredText = "Query envelope expired"

// dedupeKey is the persistent dedupe key of a chat message: (sender, session, nonce) when the
// envelope carries a nonce, else (sender, session, msg_id).
//
// Why the nonce first: it is the envelope field meant to make one envelope unique, and it is
// inside the signed digest, so a captured envelope replayed as is (the attack dedupe is for)
// carries the same nonce, while nobody but the sender can make an envelope with a new one. A
// sender that sets nonces promises one per envelope; the msg_id, by contrast, is only part of
// the payload's model. uagents 0.26 sets no nonce on agent envelopes; for those, and any
// sender that leaves it out, the payload's msg_id is the only signed field naming the
// message, so it is the key, as before (a key recorded by an older journal is the same).
// The sender and session scope both: a nonce or msg_id means something only to its sender,
// and a peer cannot block another's messages by reusing their ids.
//
// The Conversation's own work stays keyed by msg_id (a quote workflow's id is sender,
// session and msg_id), so an honest sender re-sending one message in a new envelope, with a
// new nonce, does not get it quoted twice.
func dedupeKey(env *envelope.Envelope, msgID string) string {
	if env.Nonce != nil {
		return "chatn|" + env.Sender + "|" + env.Session + "|" + strconv.FormatInt(*env.Nonce, 10)
	}
	return "chat|" + env.Sender + "|" + env.Session + "|" + msgID
}

// respond handles an envelope sent on a sync connection and returns the signed envelope the
// HTTP response carries: the acknowledgement of a ChatMessage (its replies follow as separate
// envelopes), an ErrorMessage, or nil when there is nothing to answer (the reference's {}).
func (b *Bridge) respond(ctx context.Context, env *envelope.Envelope) ([]byte, error) {
	var out syncReply
	if err := b.accept(ctx, env, &out); err != nil {
		return nil, err
	}
	if out.msg == nil {
		return nil, nil
	}
	// As the reference's enclose_response: no protocol digest, same session, back to the sender.
	reply, err := b.sender.Seal(env.Sender, env.Session, out.msg, "")
	if err != nil {
		return nil, err
	}
	return reply.Encode()
}
