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
//   - The page is judged settled, then watched to the end of the criterion's budget: the
//     verifier drives it on Chromium's virtual time (Emulation.setVirtualTimePolicy), so timers
//     fire as fast as the page runs them and the clock stops while fetches are pending (up to
//     stall_ms of real time; a long poll then no longer holds it). The first read comes once
//     no DOM mutation or layout change happened for quiet_ms of page time (or from
//     busy_fallback_ms on, for a page that never goes quiet); then a read every
//     observe_step_ms of page time, and one when the page clock reaches max_runtime_ms (past
//     its share of the real budget, a viewport jumps the clock to that final read). A criterion passes only if it holds at every read; Observed
//     holds the first failing read's values, else the last's, and evidence lists every read.
//     Late content is measured, never missed; a list that renders after a loading state of a
//     second or two is read once it is there. With a delay_route the page is read once, in
//     real time, while the route is held: what such a check asks about is the held state.
//     Running out of the real budget is status timeout.
//   - Geometry and visibility are read by probe/probe.js in an isolated world created over CDP,
//     so an app that redefines DOM getters in its own world cannot certify itself. Shadow trees,
//     open and closed, are handed to it from CDP (DOM.getDocument with pierce) and count
//     everywhere: selectors match inside them, text and overflow are read through them, and
//     clipping and opacity follow the flat tree. measure expressions run in the app's own world
//     on purpose.
//   - Visible means painted where a person sees it: rendered (not display none, visibility
//     hidden, opacity 0, or inside a content-visibility: hidden subtree), of non-zero size,
//     text in a colour that is not transparent, not clipped away by overflow hidden/clip, clip
//     or clip-path (1px visually-hidden text is not visible), horizontally inside the viewport,
//     and not above the document or below a page that cannot scroll down. visible_text
//     `within` a selector inside a horizontal scroll container also needs the matching element
//     to fit the viewport's width: a table row labelled as a card there is not a card.
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
