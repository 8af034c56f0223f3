package conversation

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// The quote states how previews run the app and what already fails on the base: both are
// terms the requester approves with the hash.
func TestQuoteNamesThePreviewTerms(t *testing.T) {
	c := contracts.Contract{ContractID: "items-1", Goal: "Show the items", Repo: contracts.Repo{Owner: "acme", Name: "shop", BaseCommitSHA: strings.Repeat("a", 40)},
		Price: contracts.Price{Amount: 4900, Currency: "usd"}, MaxAttempts: 3,
		Stack: contracts.Stack{Env: map[string]string{"NEXT_PUBLIC_SITE_NAME": "Acme Preview", "DATABASE_URL": contracts.PostgresURLRef}, Services: []string{contracts.ServicePostgres},
			Preexisting: []contracts.PreexistingFailure{{Step: "test", Cause: "Tests: 1 failed, 9 passed, 10 total", Errors: 1}}}}
	text := (&Conversation{}).quoteText(c, strings.Repeat("b", 64), nil, "", "")
	for _, want := range []string{
		"Previews run the app with DATABASE_URL=${SIGNOFF_POSTGRES_URL}, NEXT_PUBLIC_SITE_NAME=Acme Preview and a throwaway PostgreSQL of their own (nothing secret: the values are part of the terms).",
		"Already failing: test fails on the base commit (1 error): Tests: 1 failed, 9 passed, 10 total. Not part of the goal",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the quote lacks %q:\n%s", want, text)
		}
	}
}
