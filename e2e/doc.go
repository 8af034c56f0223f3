// Package e2e holds the server-backed tests of the rest of the project: contract and quote
// workflows on a real embedded Temporal server, with real workers, git, sandboxes, previews
// and Chromium. It has no code of its own; temporal/temporaltest starts the servers and
// e2e/signoffproc runs the CLI. The chat's tests are in e2e/chat, a package of their own so
// that `go test ./...` runs them beside these.
package e2e
