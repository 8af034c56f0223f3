package contracts_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
)

// A preview environment is part of the terms: names the preview sets itself, malformed
// names or values, and a database address without the database are refused at load.
func TestPreviewEnvironment(t *testing.T) {
	base, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		services []string
		problem  string // "" when it loads
	}{
		{"declared values and the database", map[string]string{"NEXT_PUBLIC_SITE": "Acme", "POSTGRES_URL": contracts.PostgresURLRef}, []string{"postgres"}, ""},
		{"the port", map[string]string{"PORT": "80"}, nil, "set by the preview itself"},
		{"a Signoff variable", map[string]string{"SIGNOFF_COMMIT_SHA": "x"}, nil, "set by the preview itself"},
		{"a package manager setting", map[string]string{"npm_config_registry": "http://10.0.0.1"}, nil, "set by the preview itself"},
		{"a line break", map[string]string{"A": "1\nB=2"}, nil, "line break"},
		{"a bad name", map[string]string{"A-B": "1"}, nil, "does not match pattern"},
		{"the database without the service", map[string]string{"DATABASE_URL": contracts.PostgresURLRef}, nil, "starts no postgres service"},
		{"an unknown service", nil, []string{"redis"}, "services"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *base
			c.Stack.Env, c.Stack.Services = tc.env, tc.services
			err := contracts.Validate(c, contracts.LoadOptions{})
			switch {
			case tc.problem == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
				t.Fatalf("err = %v, want one saying %q", err, tc.problem)
			}
		})
	}
	s := contracts.Stack{Env: map[string]string{"B": "x", "A": "db=" + contracts.PostgresURLRef}}
	if got := s.PreviewEnvWords("postgresql://preview@localhost/preview?host=/s"); !slices.Equal(got, []string{"A=db=postgresql://preview@localhost/preview?host=/s", "B=x"}) {
		t.Errorf("words %q", got)
	}
}
