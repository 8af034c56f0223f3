package dev

import (
	"github.com/signoff/signoff/chatbridge/conversation"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/settings"

	"github.com/spf13/pflag"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
)

// ChatFlags configure the chat bridge of `signoff dev`.
type ChatFlags struct {
	Off           bool
	Name          string
	AlmanacAPI    string
	AgentverseURL string
	Endpoint      string
	BaseCheck     bool
	Quotes        int
}

func (c *ChatFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.Off, "no-chat", false, "do not serve the chat bridge")
	fs.StringVar(&c.Name, "agent-name", "Signoff", "the agent's name on Agentverse")
	fs.StringVar(&c.AlmanacAPI, "almanac-api", "", "also resolve chat peers through this Almanac API (e.g. https://agentverse.ai/v1/almanac)")
	fs.StringVar(&c.AgentverseURL, "agentverse-url", "", "Agentverse base URL (default https://agentverse.ai; used when $AGENTVERSE_API_KEY is set)")
	fs.BoolVar(&c.BaseCheck, "chat-base-check", true, "run a chat task's criteria on the base commit through the queues before quoting it (a build and a browser run); false quotes in seconds, unchecked, and says so")
	fs.IntVar(&c.Quotes, "chat-concurrent-quotes", conversation.DefaultConcurrentQuotes, "chat task quotes prepared at once; later requesters wait in line and are told their place")
	fs.StringVar(&c.Endpoint, "agent-endpoint", "", "public URL of this process's /submit for Agentverse (default: the Agentverse mailbox)")
}

// options builds the stack's chat options. The seed and the Agentverse key come from the
// settings only, never from flags (flags show in process lists). A prepared executor changes
// code only for the prepared runs, and task quotes say so.
func (c *ChatFlags) options(s settings.Settings, executor string, faults *runs.FaultPlan) devstack.ChatOptions {
	note := ""
	if executor == workers.ExecutorPrepared || (executor == "" && s.Executor.Command == "") {
		note = "this Signoff runs the prepared executor, which changes code only for the prepared runs (run W1...). " +
			"Approving this contract ends in verification_error with the authorization cancelled, unless " +
			workers.EnvExecutorCommand + " names a coding CLI."
	}
	return devstack.ChatOptions{Disabled: c.Off, Seed: s.Chat.AgentSeed, Name: c.Name, AlmanacAPI: c.AlmanacAPI,
		AgentverseAPIKey: s.Chat.AgentverseAPIKey, AgentverseTeam: s.Chat.AgentverseTeam, AgentverseURL: c.AgentverseURL, Endpoint: c.Endpoint,
		ExecutorNote: note, Faults: faults, BaseCheck: c.BaseCheck, ConcurrentQuotes: c.Quotes,
		Timeouts: cmdutil.ContractTimeouts(s)}
}

// printChat tells the person starting Signoff how to reach the agent.
func printChat(io *iostreams.IO, st *devstack.Stack) {
	ch := st.Chat()
	if ch == nil {
		io.Printf("Chat:             off\n")
		return
	}
	io.Printf("Chat agent:       %s\n", ch.Address)
	io.Printf("Chat endpoint:    %s  (Agent Chat Protocol; local almanac %s)\n", ch.Endpoint, ch.AlmanacURL)
	io.Printf("Agent README:     %s  (with the fingerprints of the keys proofs are signed with)\n", ch.ReadmeURL)
	io.Printf("%s\n", ch.Agentverse)
	io.Printf("Talk to it:       signoff chat --dev-url %s\n", st.LoopbackURL)
}
