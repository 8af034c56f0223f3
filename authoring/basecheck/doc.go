// Package basecheck runs a drafted contract's criteria on its base commit, the check that
// shows each criterion can fail before the quote is offered. It holds both checkers:
//
//   - Queued runs BaseCheckWorkflow: the preview builds on the execute queue and the
//     verifier runs on the verify queue, with the same workers, keys and authority boundaries
//     as an attempt, so what the approver is shown is what the workers measured.
//   - Local builds a preview and drives the verifier on this machine, without Temporal.
//
// Choice decides which of the two runs a caller's checks (the command line's and the chat's),
// so where base checks run is decided here only.
package basecheck
