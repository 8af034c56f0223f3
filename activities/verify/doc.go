// Package verify is Signoff's independent browser verifier. It drives Chromium (local, or
// remote over CDP, or a Browserbase session) against a preview of the exact commit that was
// delivered, measures every criterion of a frozen contract, and returns evidence signed with
// the verifier's ed25519 key. It imports nothing of Temporal; the worker wraps Verifier.Verify
// in an activity on the verify queue.
//
// It sees only what the verify queue may see (DESIGN section 5): the criteria, the contract id
// and hash, the expected commit SHA and the preview URL. It never runs the repository's code
// and holds no write credential.
//
// # Semantics
//
// The observed keys are those contracts.ChecksFor names; the policy recomputes pass/fail from
// them. How they are measured:
//
//   - The run starts by reading <preview>/__verification. A missing or different commit SHA
//     stops it: the evidence records the SHA as read and has no results.
//   - Each criterion runs at each viewport in a fresh browser context: localStorage seeded
//     through the context's storage state (applied once, before the app's scripts), delayed
//     routes installed, the route loaded, the actions performed in order.
//   - The assertion is read once the page has settled: the load event fired, the network was
//     idle (bounded; not when a route is delayed on purpose), no DOM mutation for quiet_ms,
//     and stable_reads consecutive reads identical. Geometry assertions also need something
//     rendered. The budget is the criterion's max_runtime_ms; running out is status timeout.
//   - Geometry and visibility are read by probe/probe.js in an isolated world created over CDP,
//     so an app that redefines DOM getters in its own world cannot certify itself. measure
//     expressions run in the app's own world on purpose.
//   - Visible means a person can see it or scroll to it: not display none, visibility hidden
//     or opacity 0; not clipped away by overflow hidden/clip, clip or clip-path (1px
//     visually-hidden text is not visible); not parked left of or above the document, or right
//     of a page that cannot scroll sideways.
//   - no_horizontal_overflow: scroll_width is how far the viewport scrolls sideways (the
//     document's scrollWidth; innerWidth when html/body overflow stops horizontal scrolling,
//     with the raw value under document_scroll_width), and clipped_elements counts the
//     outermost items partly visible and cut off at the viewport's right edge, by the viewport
//     or by an overflow hidden/clip reaching to within edge_zone_px of it; not inside a
//     horizontal scroll container; not text truncated by an ellipsis. clipped_offenders names
//     them.
//   - Console errors exclude Chromium's own favicon 404. Page errors are uncaught exceptions
//     and unhandled rejections, and appear in every browser result (the policy's runtime gate).
//
// Every tolerance and timing above lives in probe/params.json; it and probe.js are hashed into
// Digest, so a change to them makes contracts frozen under the old semantics fail verification.
package verify
