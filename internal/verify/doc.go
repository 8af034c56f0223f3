// Package verify is Signoff's independent browser verifier. It drives Chromium (local, or
// remote over CDP, or a Browserbase session) against a preview of the exact commit that was
// delivered, measures every criterion of a frozen contract, and returns evidence signed with
// the verifier's ed25519 key. It imports nothing of Temporal; the worker wraps Verifier.Verify
// in an activity on the verify queue.
//
// It sees only what the verify queue may see (README, "Architecture"): the criteria, the contract id
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
//   - Every page measured is the commit's page on the preview's origin (origin.go). Each
//     context routes every request: a navigation of the page, a frame or a popup to another
//     origin (a 3xx, a meta refresh, a script) gets a placeholder instead of the foreign page
//     and is recorded as left_origin, which fails the criterion with that URL; a subresource
//     from an origin that is neither the preview's nor in the contract's allowed_origins is
//     blocked and listed under blocked_requests. A local browser's contexts also send all their
//     traffic, loopback included, through a proxy that connects only to the preview and the
//     allowed origins, so WebSockets, WebRTC and workers reach nothing else either. Each read
//     records the page's URL, and final_url is the URL at the end.
//   - The viewport names the device (device.go): below 640 px a touch phone (Android Chrome
//     user agent and client hints, touch, pointer: coarse, hover: none, device scale factor
//     3, navigator.platform of an ARM phone); from 640 px a desktop Chrome. Both report 8
//     cores, a screen taller than the viewport and a place's time zone at UTC+0.
//     navigator.webdriver is false and nothing says Headless, so a page cannot serve the
//     verifier something its users do not get.
//   - Each page is a fresh browser context: localStorage seeded once, before the app's
//     scripts (a script of the verifier's, in a world of its own, writes it as the page's
//     first document on the origin starts, and is then withdrawn: no request, no visit in
//     the page's history), delayed routes installed, the route loaded, the actions
//     performed in order. Criteria that only read their page (no
//     action but wait_for, no measure) at the same route, viewport, seed and budget share one
//     page (pages.go): it is loaded, waited on and watched once, each probe read carries all
//     their assertions, and each criterion is still judged on its own reads and gets its own
//     screenshot and trace. A wait that fails is only its criterion's error. A criterion that
//     clicks, types, presses, holds a route, goes to another route or measures has a page of
//     its own. Pages run two at a time.
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
//     Running out of the real budget is status timeout. The real budget is twice the page's
//     (max_runtime_ms) at each viewport (Config.RealTimeFactor), stretched by the host's load
//     per CPU up to maxLoadStretch: page loads and settling on a busy host are not the page's
//     time, and a page not yet read when its viewport's share of real time is gone is read as it is, then
//     the clock jumps to the final read. The page clock stops while a fetch is pending, so a
//     slow API can leave it behind the wall clock, where Chromium gives the page no frame;
//     after such a step the page's timers run on, not waiting on fetches, until its clock is
//     ahead of the wall clock again (virtualClock.advance). A page to which Chromium gives no
//     more frames (a busy host has left a page's screenshots and input events unanswered for
//     good) is measured once more from the start on a new page, within the same real budget; a
//     second such page is an error. No time passes inside one task of the page's script, so a
//     script that busy-waits on Date.now never ends there: when the clock stalls, the page is
//     asked for an answer (virtualClock.live), and one whose main thread gives none is
//     measured again on the wall clock (errStuck); a read unanswered to the end of the real
//     budget there is a timeout saying the script never yielded (errUnanswered).
//   - Outside the page clock: a page that talks to the world outside its clock can tell its
//     clock from a person's, so at its final read on the virtual clock it is measured again,
//     from the start on a new page, on the wall clock, with a real budget of its own (it is
//     watched for its whole budget in real time): one with dedicated or shared workers (whose
//     timers run on the wall clock; a shared worker is found among the browser's targets), a
//     WebSocket or an event stream (whose server may push or answer on the wall clock), or
//     that asked its server while its clock ran more than a second ahead of the wall clock (a
//     poll, an image). A page that asks its server the time twice sees the same clock as a
//     person's page, and what a server that answers by the wall clock says is what it shows.
//     What a page on the virtual clock asks from a person's pass on (its WebSocket tunnels
//     too, through the origin proxy of a local browser) is held until its budget has passed
//     in real time since its time origin (pacer). A fetch or XHR in flight at the final read
//     is waited for in real time, and the page read again. Requests still pending when the
//     real budget ends make the criterion an error naming them, never a pass.
//   - A person's pass: at a phone's width, a criterion with no input of its own is read once
//     more after a scroll to the bottom and back, a wheel down and up, a tap on a spot with
//     nothing to tap on and a key press (read "touched"); it must hold there too. A page that
//     talks outside its clock, or whose pass asked anything, is read "touched" at every step
//     for touchWatch of real time after it: the answers come on the wall clock. A criterion
//     that reads nothing of the page (loads, no_page_errors, no_console_errors) has no such
//     read, and on a shared page it is judged on the errors from before the pass.
//   - Geometry and visibility are read by probe/probe.js in an isolated world created over CDP,
//     so an app that redefines DOM getters in its own world cannot certify itself. Shadow trees,
//     open and closed, are handed to it from CDP (DOM.getDocument with pierce, fetched again
//     whenever a DOM event on the session says a root may have come or gone) and count
//     everywhere: selectors match inside them, text and overflow are read through them, and
//     clipping and opacity follow the flat tree. measure expressions run in the app's own world
//     on purpose.
//   - Same-origin frames (srcdoc included) are part of the page: element counts include their
//     rendered matches when the frame is visible. At a phone's width no_horizontal_overflow
//     (page-wide, not `within`) also counts wide_scrollers: visible horizontal scroll containers
//     and same-origin frames whose content is wider than the viewport and holds a non-inline
//     element (a table, a grid) or a picture (canvas, img, svg, video) wider than it, unless the
//     assertion sets allow_scrollers. Lines of text in a code block do not count.
//   - A display: contents element has no box: it is judged by its children's boxes.
//   - Visible text must also be painted: on every read but the periodic ones, the part of its
//     holder's text inside the viewport is captured, and the contrast between its lightest and
//     darkest pixels (WCAG ratio, ignoring 0.5% at each end) must reach 1.5, and its ink (the
//     pixels on the less common side of the midpoint between those two) must reach across the
//     text: into 30% of the region's rows and 15% of its columns. Text in its background's
//     colour, under filter: opacity(0) or behind an opaque sheet has none; a band of it left
//     by a mask or a clip does not reach across.
//   - Visible text must also be on top on those reads: the probe gives up to three spots on
//     its lines inside the viewport; the browser's hit test there (DOM.getNodeForLocation,
//     pointer-events: none included) must find the text's holder or something in it, or an
//     element that paints nothing over it (no background at half opacity or more, gradients
//     counted by their most opaque colour, no backdrop blur past max_text_blur, no picture
//     or field, no text of its own at the spot; a pseudo-element without content). Covered
//     at most of its spots, the text is not visible (covered_spots says how many).
//   - Visible means painted where a person sees it: rendered (not display none, visibility
//     hidden, opacity 0, or inside a content-visibility: hidden subtree), of non-zero size,
//     text readable (its glyphs filled, in a colour or by a background clipped to text, at
//     min_text_alpha or more of opacity through its ancestors and filter: opacity(); its
//     largest line min_text_px or more across on screen, after transforms and zoom; blurred
//     through its ancestors by at most max_text_blur of its font size), not clipped away by
//     overflow hidden/clip, clip
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
//   - no_horizontal_overflow with within judges one part of the page: count is its visible
//     matches; overflowing_elements counts the elements of their flat subtrees (themselves
//     included) and the owners of their text that are rendered and whose region left by
//     clipping reaches past the viewport's left or right edge by more than edge_tolerance_px,
//     partly on screen or wholly past the right edge where the viewport scrolls to it (not
//     behind overflow hidden on html or body, not fixed), unless a horizontal scroll container
//     that fits the viewport holds them; clipped_elements is the page-wide count above, kept
//     to items inside the part. Overflow elsewhere does not fail it.
//   - attribute: count is the attached matches, value the first one's attribute ("" when
//     absent), read in the isolated world.
//   - background is read from pixels, never from CSS: the part of the first visible match's
//     visible region inside the viewport (count: visible matches with such a part) is captured
//     with Page.captureScreenshot, clipped to it at a scale that makes its longer side at most
//     background_sample_px, decoded in Go, and value is the mean WCAG relative luminance of its
//     pixels (sRGB linearised; 0 black, 1 white; -1 when nothing could be sampled). A dark
//     background-color under a white image reads as white.
//   - url: value is the page's path and query as the browser driver (Playwright's frame URL)
//     knows it, after the actions; on another origin than the preview's, the whole URL.
//   - request: requests counts the page's requests to the preview's origin with the method and
//     a matching path (a trailing * is a prefix), seen by Playwright's request events, made
//     from the criterion's first click, fill or press on (from the navigation when there is
//     none): a request made on load is not the effect of an input, even when Playwright
//     reports it after the input (the page's own session hears the renderer issue it).
//   - stacked: the visible matches in flat-tree order; stack_overlaps counts those whose top is
//     above the previous one's bottom by more than edge_tolerance_px, left_spread is the widest
//     gap between their left edges.
//   - position: the first visible match (flat-tree order) in document coordinates: top,
//     bottom, from_end (document height minus bottom), inner_height, and ref.count, ref.top and
//     ref.bottom for the Before, After or Beside element; content_before and content_after
//     count the painted text nodes and displayed images, media and controls of the page's main
//     region (its first displayed main landmark, else the body) wholly above or wholly below
//     it, not counting its own ancestors and descendants. Beside adds row_overlap (the share of
//     the shorter box's height both boxes cover), beside_gap (the horizontal gap between them,
//     negative when they overlap sideways) and content_between (painted text, images, media
//     and controls anywhere on the page between them on that row, not inside either).
//   - structure: the main region's headings (with level), links, buttons, images, lists,
//     tables, forms and controls shown to people, in flat-tree order, one a line as role and
//     accessible name (whitespace collapsed, digits as #, 40 characters), at most
//     max_structure_items; structure_items counts them all.
//   - A selector may be a role locator (role=link[name="Docs"i]): elements whose ARIA role,
//     explicit or implied by the tag, and accessible name (aria-labelledby, aria-label, a form
//     control's label, an image's alt, else the content for roles named by content, else the
//     title) match; elements hidden from people (display: none, visibility, aria-hidden) never
//     match. Actions read the same syntax through Playwright's role engine.
//   - press presses Key on the first visible match of Selector, or on whatever has focus.
//   - The url, request and background values are read outside the page right after each of
//     the probe's reads, before the page clock moves on, so they are judged at every read too.
//   - Console errors exclude Chromium's own favicon 404. Page errors are uncaught exceptions
//     and unhandled rejections, and appear in every browser result (the policy's runtime gate).
//
// Every tolerance and timing above lives in probe/params.json; it and probe.js are hashed into
// Digest, so a change to them makes contracts frozen under the old semantics fail verification.
package verify
