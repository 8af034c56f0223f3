// Package chat holds `signoff chat`: a terminal chat with the Signoff agent over the Agent
// Chat Protocol, signed and acknowledged exactly as ASI:One's messages are. It is an agent of
// its own: it listens on loopback for replies and registers that endpoint in the Almanac the
// bridge resolves from (the local one `signoff dev` serves, by default).
package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/chatbridge/chatclient"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/signing"
)

// SeedFile is where the client's generated seed is kept under the data dir's keys folder, so
// the same person (the same agent address: the requester who may approve) comes back.
const SeedFile = "chat-client.seed"

// Options are the inputs of `chat`.
type Options struct {
	IO *iostreams.IO
	// DevURL is `signoff dev`'s loopback listener: it names the bridge and its almanac.
	DevURL string
	// AlmanacURL and Bridge reach a bridge without asking a dev process.
	AlmanacURL string
	Bridge     string
	Seed       string
	DataDir    string
	// Session continues a conversation (a version-4 UUID); default a new one.
	Session string
	// Send lists messages to send instead of reading stdin; each waits for a reply first.
	Send []string
	// Until ends the chat when a received message matches this regular expression.
	Until string
	// Replies ends the chat after this many received messages (0: not used).
	Replies int
	// Timeout bounds the waiting after the last message is sent.
	Timeout time.Duration
	JSON    bool
	// Start replaces chatclient.Start (tests).
	Start func(ctx context.Context, cfg chatclient.Config) (*chatclient.Client, error)
	// HTTP asks the dev process (default: 10 s timeout).
	HTTP *http.Client
}

// NewCmdChat builds `chat`; runF replaces the run in tests.
func NewCmdChat(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with the Signoff agent from a terminal (Agent Chat Protocol, signed)",
		Long: "Talks to the Signoff chat bridge as an agent of its own, exactly as ASI:One does: signed envelopes,\n" +
			"acknowledgements, replies delivered to a loopback endpoint registered in the bridge's almanac.\n" +
			"Reads lines from stdin and prints replies as they arrive; with --send it sends those messages,\n" +
			"waits for --until / --replies (or a reply to each) and exits. --json prints one JSON object a line.\n\n" +
			"Examples:\n" +
			"  signoff chat                               # against signoff dev on this machine\n" +
			"  signoff chat --send \"run W1\" --json\n" +
			"  signoff chat --session <uuid> --send \"approve <hash>\" --send pay --until \"Payment captured|Authorization cancelled\"",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			s, err := f.Settings()
			if err != nil {
				return err
			}
			if o.Seed == "" {
				o.Seed = s.Chat.ClientSeed
			}
			if runF != nil {
				return runF(o)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return Run(ctx, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.DevURL, "dev-url", "http://127.0.0.1:8480", "signoff dev's loopback URL (names the bridge and its almanac)")
	fs.StringVar(&o.AlmanacURL, "almanac", "", "an Almanac API root to resolve the bridge and register this client (with --bridge)")
	fs.StringVar(&o.Bridge, "bridge", "", "the bridge's agent address (with --almanac)")
	fs.StringVar(&o.Seed, "seed", "", "this client's seed (prefer $SIGNOFF_CHAT_SEED; default a seed kept in <data-dir>/keys/"+SeedFile+")")
	fs.StringVar(&o.Session, "session", "", "continue this conversation (a UUID; default a new one)")
	fs.StringArrayVar(&o.Send, "send", nil, "send this message (repeatable) instead of reading stdin")
	fs.StringVar(&o.Until, "until", "", "exit once a received message matches this regular expression")
	fs.IntVar(&o.Replies, "replies", 0, "exit after this many received messages")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "how long to wait for replies after the last message")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object per line")
	return cmd
}

// Line is one --json output line.
type Line struct {
	Type      string `json:"type"` // hello, sent, message, error, end
	Address   string `json:"address,omitempty"`
	Bridge    string `json:"bridge,omitempty"`
	Session   string `json:"session,omitempty"`
	MsgID     string `json:"msg_id,omitempty"`
	Text      string `json:"text,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Run chats until stdin ends (or the --send messages are answered), --until matches, or ctx
// ends.
func Run(ctx context.Context, o *Options) error {
	var until *regexp.Regexp
	if o.Until != "" {
		re, err := regexp.Compile(o.Until)
		if err != nil {
			return iostreams.BadInput(fmt.Errorf("--until: %w", err))
		}
		until = re
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	id, err := clientIdentity(o)
	if err != nil {
		return err
	}
	cfg := chatclient.Config{Identity: id, Session: o.Session, HTTPClient: o.HTTP}
	switch {
	case o.Bridge != "" || o.AlmanacURL != "":
		if o.Bridge == "" || o.AlmanacURL == "" {
			return iostreams.BadInput(errors.New("--almanac and --bridge go together"))
		}
		cfg.Bridge, cfg.AlmanacURL = o.Bridge, o.AlmanacURL
	default:
		info, err := devInfo(ctx, o)
		if err != nil {
			return iostreams.Failed(err)
		}
		cfg.Bridge, cfg.AlmanacURL = info.Address, info.AlmanacURL
	}
	start := o.Start
	if start == nil {
		start = chatclient.Start
	}
	c, err := start(ctx, cfg)
	if err != nil {
		return iostreams.Failed(err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Close(closeCtx)
	}()
	p := &printer{o: o, until: until}
	p.line(Line{Type: "hello", Address: c.Address(), Bridge: cfg.Bridge, Session: c.Session()},
		fmt.Sprintf("Chatting with %s as %s (session %s). Type a message; Ctrl-D ends.", cfg.Bridge, c.Address(), c.Session()))

	if len(o.Send) > 0 {
		for _, text := range o.Send {
			before := p.received
			if err := p.say(ctx, c, text); err != nil {
				return err
			}
			// Each message gets its answer before the next goes (approve, then pay).
			if err := p.wait(ctx, c, o.Timeout, func() bool { return p.received > before || p.matched }); err != nil {
				return err
			}
		}
		return p.finish(ctx, c, o.Timeout, len(o.Send))
	}

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(o.IO.In)
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	sent := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case text, ok := <-lines:
			if !ok {
				return p.finish(ctx, c, o.Timeout, sent)
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
			if err := p.say(ctx, c, text); err != nil {
				return err
			}
			sent++
		case m := <-c.Messages():
			p.message(m)
		case e := <-c.Errors():
			p.line(Line{Type: "error", Text: e}, "error from the bridge: "+e)
		}
		if p.matched {
			return nil
		}
	}
}

// printer writes what happens, as text or JSON lines, and keeps the counts the exits need.
type printer struct {
	o        *Options
	until    *regexp.Regexp
	received int
	matched  bool
}

func (p *printer) line(l Line, human string) {
	if p.o.JSON {
		enc := json.NewEncoder(p.o.IO.Out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(l)
		return
	}
	if human == "" {
		return
	}
	switch l.Type {
	case "hello", "sent", "end":
		fmt.Fprintln(p.o.IO.ErrOut, human)
	default:
		fmt.Fprintln(p.o.IO.Out, human)
	}
}

func (p *printer) say(ctx context.Context, c *chatclient.Client, text string) error {
	id, err := c.Say(ctx, text)
	if err != nil {
		return iostreams.Failed(err)
	}
	p.line(Line{Type: "sent", MsgID: id, Text: text}, "> "+text)
	return nil
}

func (p *printer) message(m chatclient.Message) {
	p.received++
	p.line(Line{Type: "message", MsgID: m.MsgID, Session: m.Session, Text: m.Text, Timestamp: m.Timestamp.UTC().Format(time.RFC3339Nano)},
		"signoff: "+strings.ReplaceAll(m.Text, "\n", "\n         "))
	if p.until != nil && p.until.MatchString(m.Text) {
		p.matched = true
	}
}

// wait prints what arrives until done says so; it fails after timeout.
func (p *printer) wait(ctx context.Context, c *chatclient.Client, timeout time.Duration, done func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-c.Messages():
			p.message(m)
		case e := <-c.Errors():
			p.line(Line{Type: "error", Text: e}, "error from the bridge: "+e)
		case <-deadline.C:
			p.line(Line{Type: "end", Reason: "timeout"}, fmt.Sprintf("no further reply within %s", timeout))
			return iostreams.SilentExit(iostreams.ExitFailure)
		}
	}
	return nil
}

// finish waits, after the last message, for --until, else --replies, else a reply to each
// message sent.
func (p *printer) finish(ctx context.Context, c *chatclient.Client, timeout time.Duration, sent int) error {
	var done func() bool
	switch {
	case p.until != nil:
		done = func() bool { return p.matched }
	case p.o.Replies > 0:
		done = func() bool { return p.received >= p.o.Replies }
	default:
		done = func() bool { return p.received >= sent }
	}
	if err := p.wait(ctx, c, timeout, done); err != nil {
		return err
	}
	p.line(Line{Type: "end", Reason: "done"}, "")
	return nil
}

// devInfo asks `signoff dev` which agent the bridge is and where its almanac is.
func devInfo(ctx context.Context, o *Options) (chatclient.BridgeInfo, error) {
	var info chatclient.BridgeInfo
	u := strings.TrimRight(o.DevURL, "/") + chatclient.BridgeInfoPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return info, fmt.Errorf("--dev-url: %w", err)
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return info, fmt.Errorf("reach signoff dev at %s (is it running?): %w", o.DevURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("%s: HTTP %d (is the chat bridge on? it runs with the control queue)", u, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&info); err != nil {
		return info, fmt.Errorf("%s: %w", u, err)
	}
	if !identity.IsAgentAddress(info.Address) || info.AlmanacURL == "" {
		return info, fmt.Errorf("%s did not name a bridge", u)
	}
	return info, nil
}

// clientIdentity is o.Seed (--seed, else $SIGNOFF_CHAT_SEED), else a seed generated once and
// kept.
func clientIdentity(o *Options) (*identity.Identity, error) {
	seed := o.Seed
	if seed == "" {
		var err error
		if seed, err = signing.LoadOrCreateSeed(filepath.Join(datadir.Paths(o.DataDir).Keys, SeedFile), 1); err != nil {
			return nil, iostreams.Failed(fmt.Errorf("chat client seed: %w", err))
		}
	}
	id, err := identity.FromSeed(seed, 0)
	if err != nil {
		return nil, iostreams.BadInput(err)
	}
	return id, nil
}
