// Package chat holds the chat's server-backed tests: `signoff dev` run as a process on its
// own data dir, spoken to over loopback by real uAgents peers (chatbridge/testdata, in the
// Python virtualenv the chat setup makes), SIGKILLed and started again. It has no code of its
// own.
package chat
