// Package survey is a read-only look at a repository at its pinned base commit, through git
// and never the work tree: framework and version, package manager and scripts, pages and
// route handlers with their files, pages behind a sign-in and how to sign in, anchors a
// criterion can point at, and the files most relevant to a goal.
//
// ResolveSource names the repository (before anything of it is read, so admission can run
// first), Source.Fetch clones a remote one, and Read surveys it. What is particular to a
// framework lives in files named for it (nextjs*.go: Next.js, the one framework served for
// now); git, source and JSX reading, goal words and the summary are shared.
package survey
