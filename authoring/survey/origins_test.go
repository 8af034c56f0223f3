package survey_test

import (
	"context"
	"slices"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/survey"
)

// TestSurveyProposesOriginsTheCodeLoadsFrom: the https origins named in links, scripts, CSS
// url() and @import become the contract's allowed origins; a plain link to another site in the
// text, an http origin and node_modules are not proposed.
func TestSurveyProposesOriginsTheCodeLoadsFrom(t *testing.T) {
	files := financeFiles(t, "")
	files["app/layout.tsx"] = `export default function L({children}) { return <html><head>
		<link rel="stylesheet" href="https://fonts.example.com/css2?family=Inter" />
		<script src="https://cdn.example.net:8443/lib.js"></script>
		<link rel="stylesheet" href="http://insecure.example.org/x.css" />
		</head><body>{children}<p>See https://docs.example.io for more.</p></body></html> }`
	files["app/globals.css"] = `@import "https://static.example.com/reset.css"; body { background: url(https://img.example.com/bg.png) }`
	files["node_modules/x/index.js"] = `const a = '<img src="https://tracker.example.com/p.gif">'`
	repo, _ := authoringtest.RepoFrom(t, files)
	src, err := survey.ResolveSource(context.Background(), repo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://cdn.example.net:8443", "https://fonts.example.com", "https://img.example.com", "https://static.example.com"}
	if !slices.Equal(s.ExternalOrigins, want) {
		t.Errorf("external origins %v, want %v", s.ExternalOrigins, want)
	}
}
