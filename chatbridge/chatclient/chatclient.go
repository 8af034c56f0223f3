// Package chatclient is the library behind the terminal `signoff chat`: an agent of its own
// that talks to the Signoff bridge over the Agent Chat Protocol, exactly as ASI:One would,
// receiving replies on a loopback /submit endpoint and acknowledging each one.
package chatclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/signoff/signoff/chatbridge/almanac"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
	"github.com/signoff/signoff/internal/hostcheck"
)

// Config wires a Client.
type Config struct {
	// Identity of the client; nil generates a throwaway one.
	Identity *identity.Identity
	// Bridge is the Signoff agent's address (required).
	Bridge string
	// BridgeURL is the bridge's submit URL. When empty the bridge is resolved via AlmanacURL.
	BridgeURL string
	// AlmanacURL is an Almanac API (normally Signoff's local registry, .../v1/almanac). When
	// set, the client registers its loopback endpoint there at Start so the bridge can resolve
	// where to send replies.
	AlmanacURL string
	// Resolver, if set, is used for the bridge instead of BridgeURL / AlmanacURL.
	Resolver transport.Resolver
	// ListenAddr for the reply endpoint; default "127.0.0.1:0" (loopback only).
	ListenAddr string
	// Session is the conversation id; default a fresh version-4 UUID.
	Session    string
	HTTPClient *http.Client
	Retry      transport.Retry
	Logger     *slog.Logger
}

// Message is a ChatMessage received from the bridge.
type Message struct {
	MsgID      string
	Session    string
	Text       string
	Timestamp  time.Time
	EndSession bool
}

// Client is a running chat client. Read Messages (and optionally Acks and Errors) until Close.
type Client struct {
	cfg    Config
	id     *identity.Identity
	sender *transport.Sender
	ln     net.Listener
	srv    *http.Server
	log    *slog.Logger

	messages chan Message
	acks     chan string
	errs     chan string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start listens on loopback, registers the endpoint (when AlmanacURL is set) and returns.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	if !identity.IsAgentAddress(cfg.Bridge) {
		return nil, fmt.Errorf("chatclient: bridge address %q is not an agent address", cfg.Bridge)
	}
	id := cfg.Identity
	if id == nil {
		var err error
		if id, err = identity.Generate(); err != nil {
			return nil, err
		}
	}
	if cfg.Session == "" {
		cfg.Session = uuid4.New()
	} else if s, err := uuid4.ParseEnvelope(cfg.Session); err != nil {
		return nil, fmt.Errorf("chatclient: session must be a version-4 UUID: %w", err)
	} else {
		cfg.Session = s
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	resolver := cfg.Resolver
	switch {
	case resolver != nil:
	case cfg.BridgeURL != "":
		resolver = transport.Static{cfg.Bridge: {cfg.BridgeURL}}
	case cfg.AlmanacURL != "":
		resolver = &almanac.APIResolver{BaseURL: cfg.AlmanacURL, Client: cfg.HTTPClient}
	default:
		return nil, errors.New("chatclient: one of BridgeURL, AlmanacURL or Resolver is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("chatclient: listen: %w", err)
	}
	c := &Client{
		cfg: cfg, id: id, ln: ln, log: log,
		sender:   &transport.Sender{Identity: id, Resolver: resolver, Client: cfg.HTTPClient, Retry: cfg.Retry},
		messages: make(chan Message, 64),
		acks:     make(chan string, 64),
		errs:     make(chan string, 16),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	inbox := &transport.Inbox{Hosts: func(a string) bool { return a == id.Address() }, Deliver: c.deliver}
	c.srv = &http.Server{Handler: hostcheck.Wrap(inbox, ln.Addr()), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()

	if cfg.AlmanacURL != "" {
		att, err := almanac.NewAttestation(id, identity.MainnetPrefix, []string{c.Endpoint()}, []string{chatproto.ProtocolDigest}, time.Now())
		if err == nil {
			err = (&almanac.Client{BaseURL: cfg.AlmanacURL, HTTP: cfg.HTTPClient}).Register(ctx, att)
		}
		if err != nil {
			_ = c.Close(context.Background())
			return nil, fmt.Errorf("chatclient: register endpoint: %w", err)
		}
	}
	return c, nil
}

// Address is the client's agent address.
func (c *Client) Address() string { return c.id.Address() }

// Endpoint is the loopback URL replies are delivered to.
func (c *Client) Endpoint() string { return "http://" + c.ln.Addr().String() + "/submit" }

// Session is the conversation id used for every message.
func (c *Client) Session() string { return c.cfg.Session }

// Messages delivers the bridge's ChatMessages (each already acknowledged).
func (c *Client) Messages() <-chan Message { return c.messages }

// Acks delivers the ids of our messages the bridge acknowledged.
func (c *Client) Acks() <-chan string { return c.acks }

// Errors delivers ErrorMessage texts from the bridge.
func (c *Client) Errors() <-chan string { return c.errs }

// Say sends text to the bridge as a signed ChatMessage and returns its msg_id.
func (c *Client) Say(ctx context.Context, text string) (string, error) {
	msg := chatproto.ChatMessage{Timestamp: time.Now(), MsgID: uuid4.New(), Content: []chatproto.Content{chatproto.TextContent{Text: text}}}
	if _, err := c.sender.Send(ctx, c.cfg.Bridge, c.cfg.Session, msg, chatproto.ProtocolDigest); err != nil {
		return "", fmt.Errorf("chatclient: send: %w", err)
	}
	return msg.MsgID, nil
}

// Close stops the endpoint and waits for pending acknowledgements.
func (c *Client) Close(ctx context.Context) error {
	err := c.srv.Shutdown(ctx)
	c.cancel()
	c.wg.Wait()
	return err
}

// deliver handles envelopes that passed the /submit checks. Only the bridge is listened to.
func (c *Client) deliver(_ context.Context, env *envelope.Envelope) error {
	if env.Sender != c.cfg.Bridge {
		c.log.Warn("ignoring envelope from an agent other than the bridge", "sender", env.Sender)
		return nil
	}
	payload, err := env.DecodePayload()
	if err != nil {
		c.log.Warn("undecodable payload", "err", err)
		return nil
	}
	switch env.SchemaDigest {
	case chatproto.ChatMessageDigest:
		m, err := chatproto.DecodeChatMessage(payload)
		if err != nil {
			c.log.Warn("non-conforming chat message", "err", err)
			return nil
		}
		select {
		case c.messages <- Message{MsgID: m.MsgID, Session: env.Session, Text: m.Text(), Timestamp: m.Timestamp, EndSession: m.Has(chatproto.TypeEndSession)}:
		default:
			return errors.New("chatclient: reader is behind") // 503: the bridge retries
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			ack := chatproto.ChatAcknowledgement{Timestamp: time.Now(), AcknowledgedMsgID: m.MsgID}
			if _, err := c.sender.Send(c.ctx, c.cfg.Bridge, env.Session, ack, chatproto.ProtocolDigest); err != nil {
				c.log.Warn("acknowledgement not delivered", "err", err)
			}
		}()
	case chatproto.ChatAcknowledgementDigest:
		if a, err := chatproto.DecodeAcknowledgement(payload); err == nil {
			select {
			case c.acks <- a.AcknowledgedMsgID:
			default:
			}
		}
	case chatproto.ErrorMessageDigest:
		if e, err := chatproto.DecodeErrorMessage(payload); err == nil {
			select {
			case c.errs <- e.Error:
			default:
			}
		}
	}
	return nil
}

// BridgeInfoPath is the loopback route where a dev stack describes its chat bridge, so that
// `signoff chat` finds the bridge without linking the stack that runs it.
const BridgeInfoPath = "/chat/agent"

// BridgeInfo is BridgeInfoPath's answer.
type BridgeInfo struct {
	Address    string `json:"address"`
	Endpoint   string `json:"endpoint"`
	AlmanacURL string `json:"almanac_url"`
	Protocol   string `json:"protocol"`
}
