package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/almanac"
	"github.com/signoff/signoff/chatbridge/chatclient"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/chat"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

// scripted answers each message and, for "approve", pushes progress later as the workflow
// side would.
type scripted struct {
	bridge *chatbridge.Bridge
}

func (s *scripted) OnText(_ context.Context, in chatbridge.Inbound) ([]string, error) {
	if strings.HasPrefix(in.Text, "approve") {
		// One goroutine sends the reply and then the progress, so they arrive in that order
		// (a reply returned here would race the pushed progress).
		go func() {
			for _, text := range []string{"Approved.", "Attempt 1: build passed; verifying in a real browser.",
				"Payment captured: the contract is satisfied."} {
				_, _ = s.bridge.Send(context.Background(), in.Sender, in.Session, text)
			}
		}()
		return nil, nil
	}
	return []string{"You said: " + in.Text}, nil
}

// devLike serves what `signoff dev` serves for the chat: the bridge on one listener, the local
// almanac and the bridge's description on another.
func devLike(t *testing.T) string {
	t.Helper()
	reg := &almanac.Registry{}
	id, err := identity.FromSeed("chat command test bridge", 0)
	if err != nil {
		t.Fatal(err)
	}
	conv := &scripted{}
	b, err := chatbridge.New(chatbridge.Config{Identity: id, Conversation: conv, Resolver: reg})
	if err != nil {
		t.Fatal(err)
	}
	conv.bridge = b
	pub := httptest.NewServer(b)
	t.Cleanup(pub.Close)
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	att, err := almanac.NewAttestation(id, identity.MainnetPrefix, []string{pub.URL + "/submit"}, []string{chatproto.ProtocolDigest}, time.Now())
	if err != nil || reg.Register(att) != nil {
		t.Fatalf("register bridge: %v", err)
	}
	mux := http.NewServeMux()
	loop := httptest.NewServer(mux)
	t.Cleanup(loop.Close)
	mux.Handle("/v1/almanac/", reg)
	mux.HandleFunc("GET "+chatclient.BridgeInfoPath, func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(chatclient.BridgeInfo{Address: id.Address(), Endpoint: pub.URL + "/submit", AlmanacURL: loop.URL + "/v1/almanac"})
	})
	return loop.URL
}

func lines(t *testing.T, out string) []chat.Line {
	t.Helper()
	var ls []chat.Line
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		var l chat.Line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("not a JSON line: %q", s)
		}
		ls = append(ls, l)
	}
	return ls
}

func TestStdinConversationAsJSONLines(t *testing.T) {
	dev := devLike(t)
	dataDir := t.TempDir()
	io, out, errOut := iostreams.Test()
	io.In = strings.NewReader("help\n\nrun W1\n")
	o := &chat.Options{IO: io, DevURL: dev, DataDir: dataDir, JSON: true, Timeout: 10 * time.Second}
	if err := chat.Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	ls := lines(t, out.String())
	if ls[0].Type != "hello" || !identity.IsAgentAddress(ls[0].Address) || ls[0].Session == "" {
		t.Fatalf("hello line %+v", ls[0])
	}
	var sent, got []string
	for _, l := range ls {
		switch l.Type {
		case "sent":
			sent = append(sent, l.Text)
		case "message":
			got = append(got, l.Text)
		}
	}
	if strings.Join(sent, "|") != "help|run W1" || len(got) != 2 || !strings.Contains(strings.Join(got, "|"), "You said: run W1") {
		t.Fatalf("sent %q, got %q", sent, got)
	}
	if last := ls[len(ls)-1]; last.Type != "end" || last.Reason != "done" {
		t.Fatalf("last line %+v", last)
	}
	// The client's identity is kept (0600), so the requester comes back as the same address.
	fi, err := os.Stat(filepath.Join(dataDir, "keys", chat.SeedFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("seed file: %v %v", err, fi)
	}
	io2, out2, _ := iostreams.Test()
	io2.In = strings.NewReader("")
	if err := chat.Run(context.Background(), &chat.Options{IO: io2, DevURL: dev, DataDir: dataDir, JSON: true, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if again := lines(t, out2.String())[0]; again.Address != ls[0].Address {
		t.Fatalf("address changed: %s then %s", ls[0].Address, again.Address)
	}
}

func TestSendWaitsUntilMatch(t *testing.T) {
	dev := devLike(t)
	io, out, errOut := iostreams.Test()
	session := "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	o := &chat.Options{IO: io, DevURL: dev, Seed: "chat test client", Session: session, Send: []string{"status", "approve abc"},
		Until: "captured|cancelled", Timeout: 10 * time.Second}
	if err := chat.Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	text := out.String()
	for _, want := range []string{"signoff: You said: status", "signoff: Approved.", "signoff: Payment captured"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(errOut.String(), "session "+session) || !strings.Contains(errOut.String(), "> approve abc") {
		t.Fatalf("stderr:\n%s", errOut)
	}
}

func TestBadInputAndNoDev(t *testing.T) {
	io, _, _ := iostreams.Test()
	for _, o := range []*chat.Options{
		{IO: io, Until: "(", Seed: "x"},
		{IO: io, AlmanacURL: "http://127.0.0.1:1/v1/almanac", Seed: "x"},
	} {
		if err := chat.Run(context.Background(), o); iostreams.ExitCode(err) != iostreams.ExitBadInput {
			t.Fatalf("%+v: err %v", o, err)
		}
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	err := chat.Run(context.Background(), &chat.Options{IO: io, DevURL: closed.URL, Seed: "x"})
	if iostreams.ExitCode(err) != iostreams.ExitFailure || !strings.Contains(err.Error(), "is it running") {
		t.Fatalf("err %v", err)
	}
	// A session that is not a version-4 UUID is refused before anything is sent.
	dev := devLike(t)
	err = chat.Run(context.Background(), &chat.Options{IO: io, DevURL: dev, Seed: "x", Session: "not-a-uuid"})
	if err == nil || !strings.Contains(err.Error(), "version-4 UUID") {
		t.Fatalf("err %v", err)
	}
}

func TestCommandFlags(t *testing.T) {
	io, _, _ := iostreams.Test()
	var got *chat.Options
	cmd := chat.NewCmdChat(cmdutil.New(io), func(o *chat.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--send", "run W1", "--send", "approve x", "--until", "captured", "--json", "--timeout", "3m"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Send, "|") != "run W1|approve x" || got.Until != "captured" || !got.JSON || got.Timeout != 3*time.Minute {
		t.Fatalf("options %+v", got)
	}
}
