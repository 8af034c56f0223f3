package survey_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// The preview's environment: what the repository declares wins; a database URL its example
// file lists is pointed at the preview's own database; other names are named, never asked
// for; a PostgreSQL client among the dependencies starts the database.
func TestPreviewEnvironmentIsProposed(t *testing.T) {
	const pkg = `{"scripts":{"build":"next build","start":"next start","db:migrate":"drizzle-kit migrate","db:seed":"tsx lib/seed.ts"},"dependencies":{"next":"15.0.0","react":"19.0.0"%s}}`
	read := func(t *testing.T, deps string, extra map[string]string) *survey.Survey {
		t.Helper()
		files := map[string]string{
			"package.json":      strings.Replace(pkg, "%s", deps, 1),
			"package-lock.json": "{}",
			"app/page.tsx":      `export default function Home() { return <h1>Home</h1> }`,
		}
		maps.Copy(files, extra)
		repo, _ := authoringtest.RepoFrom(t, files)
		src, _ := survey.ResolveSource(context.Background(), repo, "", "")
		s, err := survey.Read(context.Background(), src, survey.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	noted := func(s *survey.Survey, parts ...string) bool {
		return slices.ContainsFunc(s.Notes, func(n string) bool {
			for _, p := range parts {
				if !strings.Contains(n, p) {
					return false
				}
			}
			return true
		})
	}
	t.Run("a SaaS starter's example file", func(t *testing.T) {
		s := read(t, `,"postgres":"3.4.5","drizzle-orm":"0.43.1"`, map[string]string{
			".env.example": "POSTGRES_URL=postgresql://***\nSTRIPE_SECRET_KEY=sk_test_***\nBASE_URL=http://localhost:3000\nAUTH_SECRET=***\n",
		})
		st := s.Stack()
		if !maps.Equal(st.Env, map[string]string{"POSTGRES_URL": contracts.PostgresURLRef}) || !slices.Equal(st.Services, []string{"postgres"}) {
			t.Fatalf("stack env %v services %v", st.Env, st.Services)
		}
		if !noted(s, "uses PostgreSQL (postgres)", "POSTGRES_URL point there", "commit the tables and rows", "previews do not run db:migrate, db:seed") ||
			!noted(s, "not set in previews: BASE_URL") || !noted(s, "never asked for: AUTH_SECRET, STRIPE_SECRET_KEY") {
			t.Errorf("notes %q", s.Notes)
		}
	})
	t.Run("declared values win", func(t *testing.T) {
		s := read(t, `,"pg":"8.13.0"`, map[string]string{
			".env.example":         "DATABASE_URL=postgres://user:pass@localhost/db\nNEXT_PUBLIC_SITE=\n",
			".signoff/preview.env": "# previews\nexport NEXT_PUBLIC_SITE=\"Acme Preview\"\nDATABASE_URL=${SIGNOFF_POSTGRES_URL}?sslmode=disable # the preview's own\n",
			".signoff/preview.sql": "create table t (id int);\n",
		})
		want := map[string]string{"NEXT_PUBLIC_SITE": "Acme Preview", "DATABASE_URL": contracts.PostgresURLRef + "?sslmode=disable"}
		if !maps.Equal(s.PreviewEnv, want) || !slices.Equal(s.Services, []string{"postgres"}) {
			t.Fatalf("env %v services %v", s.PreviewEnv, s.Services)
		}
		if !noted(s, "uses PostgreSQL (pg)", ".signoff/preview.sql is run on it before the build") {
			t.Errorf("notes %q", s.Notes)
		}
	})
	t.Run("no database", func(t *testing.T) {
		s := read(t, "", map[string]string{".env.example": "NEXT_PUBLIC_API=https://api.example\n"})
		if s.PreviewEnv != nil || s.Services != nil || !noted(s, "not set in previews: NEXT_PUBLIC_API") {
			t.Errorf("env %v services %v notes %q", s.PreviewEnv, s.Services, s.Notes)
		}
	})
	for _, bad := range []struct{ file, why string }{
		{"PORT=80\n", "line 1: PORT is set by the preview itself"},
		{"A=1\nB\n", "line 2: want NAME=value"},
		{"A=1\nA=2\n", "line 2: A is already set on line 1"},
		{"A=\"open\n", "quote is not closed"},
		{"NODE_OPTIONS=--require x\nnpm_config_registry=http://10.1.1.1\n", "line 2: npm_config_registry: variables starting npm_ are set by the preview itself"},
	} {
		s := read(t, "", map[string]string{".signoff/preview.env": bad.file})
		if !strings.HasPrefix(s.PreviewEnvProblem, ".signoff/preview.env: ") || !strings.Contains(s.PreviewEnvProblem, bad.why) || s.PreviewEnv != nil {
			t.Errorf("%q: problem %q, env %v; want %q", bad.file, s.PreviewEnvProblem, s.PreviewEnv, bad.why)
		}
	}
}
