// Package e2e holds the server-backed tests of the rest of the project: contract, quote
// and chat workflows on a real embedded Temporal server, with real workers, git, sandboxes,
// previews and Chromium. It has no code of its own; temporal/temporaltest starts the
// servers.
package e2e
