// Package activities holds Signoff's side effects as Temporal activities, grouped by the task
// queue that carries their authority: Control (payment, deliverable, proof bundle, index,
// notifications), Execute (the repo's code: executor, build, preview) and Verify (the browser).
// Each group is a struct holding its clients behind the small interfaces of
// internal/capability; the implementations live in internal/ and are wired in workers/. This
// package imports no implementation, so the workflow can use it without linking a browser or a
// payment client. ApplicationError maps a capability's classified errors to Temporal's.
package activities
