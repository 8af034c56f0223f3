// Package criteria turns a goal and a survey of the base commit into a draft: 4-6 criteria,
// the test hooks they rely on, and the scope the quote is priced from. Rules, the default
// Generator, reads the goal's words (intent.go, layout.go, behaviour.go, position.go,
// scope.go) and builds each page's checks (page_plan.go, page_checks.go) or an endpoint's
// (backend.go). It refuses, with the reason, goals that cannot be made objective or reach
// outside the repository.
package criteria
