// Package authoring turns a request ("make the Watchlist page work on mobile") into a
// contract a user can approve: 4-6 objective criteria against the real repository, proven
// able to fail, with a price.
//
// The flow (Author.Draft):
//
//  1. Admission: the repository must match the allowlist and the requester be within the
//     rate limit, before anything of the repository is read.
//  2. Survey (package survey): a read-only look at the pinned base commit through git
//     (never the work tree): framework and version, package manager and scripts, pages and
//     route handlers with their files, pages behind a sign-in and how to sign in, anchors a
//     criterion can point at, and the files most relevant to the goal.
//  3. Generation (package criteria): a Generator turns goal and survey into criteria. Rules
//     is the default; it refuses, with the reason, goals that cannot be made objective or
//     reach outside the repository.
//  4. Validation and quote (package pricing): the contract must pass contracts.Validate; the
//     price follows the scope and never buys a lower bar.
//  5. BaseCheck: a BaseChecker runs the criteria on the base commit. A contract the base
//     already satisfies is vacuous and not offered; criteria that already pass stay in the
//     terms as regression guards, and guards the base already fails are left out of them.
//
// Refusals are typed errors: package refusal's for malformed input and refused goals, this
// package's for admission and the base check, package pricing's for a budget. None of these
// packages imports browser, preview or Temporal code; package basecheck provides the
// BaseCheckers, on this machine or through the queues.
package authoring
