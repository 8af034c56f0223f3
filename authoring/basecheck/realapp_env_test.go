package basecheck_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/realapps"
	"github.com/signoff/signoff/internal/sandbox"
)

// A page that reads a table at render, in a create-next-app app with node-postgres added as
// a team adds it, and what the team commits for previews: the variables (.signoff/preview.env,
// one of them pointing at the preview's database) and the rows the page needs
// (.signoff/preview.sql).
const (
	pgItemsPage = `import { Pool } from "pg";

export const dynamic = "force-dynamic";

const pool = new Pool({ connectionString: process.env.DATABASE_URL });

export default async function Items() {
  const { rows } = await pool.query<{ name: string }>("select name from items order by name");
  return (
    <main>
      <h1>{process.env.NEXT_PUBLIC_SITE_NAME} items</h1>
      <ul>
        {rows.map((r) => (
          <li key={r.name}>{r.name}</li>
        ))}
      </ul>
    </main>
  );
}
`
	pgPreviewEnv = "# Values for Signoff's previews: nothing secret.\nDATABASE_URL=${SIGNOFF_POSTGRES_URL}\nNEXT_PUBLIC_SITE_NAME=\"Acme Preview\"\n"
	pgSeed       = "create table items (name text primary key);\ninsert into items values ('lamp'), ('desk'), ('chair');\n"
	pgExample    = "DATABASE_URL=postgres://user:password@localhost:5432/acme\nNEXT_PUBLIC_SITE_NAME=Acme\nSESSION_SECRET=change-me\n"
)

// TestPostgresBackedPageOnCreateNextApp is issue 27's environment must-show on a real build:
// the survey proposes the stack from what the repository declares (the variables, a
// PostgreSQL for the pg dependency), and the preview built from that stack serves the page
// with the rows its own throwaway database holds.
func TestPostgresBackedPageOnCreateNextApp(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a Next.js app from the npm registry, builds it and starts PostgreSQL")
	}
	if preview.FindPostgres() == "" {
		t.Fatal("no PostgreSQL server: run `go tool task sandbox:postgres`")
	}
	mod := moduleRoot(t)
	maker, err := realapps.NewMaker(mod, preview.DefaultUser, preview.FindPackageManagers(""), nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tree, err := maker.Make(ctx, realapps.WithDependencies("cna-npm-pg", map[string]string{"pg": "^8.13.0"}, map[string]string{"@types/pg": "^8.11.10"}))
	if err != nil {
		t.Fatal(err)
	}
	app, err := realapps.Files(tree)
	if err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{
		"app/items/page.tsx":      pgItemsPage,
		contracts.PreviewEnvFile:  pgPreviewEnv,
		contracts.PreviewSeedFile: pgSeed,
		".env.example":            pgExample,
	} {
		app[p] = &fstest.MapFile{Data: []byte(s), Mode: 0o644}
	}
	// create-next-app ignores every .env file; a team that commits an example says so.
	ignore, ok := app[".gitignore"]
	if !ok {
		t.Fatal("create-next-app wrote no .gitignore")
	}
	app[".gitignore"] = &fstest.MapFile{Data: append(slices.Clip(ignore.Data), "\n!.env.example\n"...), Mode: 0o644}
	root := traversable(t, "authoring-pg-")
	repo := filepath.Join(root, "acme")
	base, err := fixturerepo.MaterializeFS(app, repo)
	if err != nil {
		t.Fatal(err)
	}
	src, err := survey.ResolveSource(ctx, repo, base, "acme/shop")
	if err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(ctx, src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stack := s.Stack()
	wantEnv := map[string]string{"DATABASE_URL": contracts.PostgresURLRef, "NEXT_PUBLIC_SITE_NAME": "Acme Preview"}
	if !maps.Equal(stack.Env, wantEnv) || !slices.Equal(stack.Services, []string{contracts.ServicePostgres}) {
		t.Fatalf("stack env %v, services %v; want %v and postgres", stack.Env, stack.Services, wantEnv)
	}
	if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "never asked for: SESSION_SECRET") }) {
		t.Errorf("notes %q do not say the secret is not asked for", s.Notes)
	}
	runAs := ""
	if os.Geteuid() == 0 {
		runAs = preview.DefaultUser
	}
	launcher, err := preview.New(preview.Config{JobsRoot: filepath.Join(root, "jobs"), RunAs: runAs, Sandbox: maker.Sandbox, InstallNetwork: sandbox.NetEgress,
		PackageManagers: preview.FindPackageManagers(""), StepTimeout: 10 * time.Minute, StartTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	job, err := launcher.Prepare(ctx, repo, base, preview.Options{Env: stack.Env, Services: stack.Services})
	if err != nil {
		if job != nil {
			for _, st := range job.Build.Steps {
				if st.Status == preview.StatusFailed {
					log, _ := os.ReadFile(st.Log)
					t.Logf("%s failed:\n%s", st.Name, log)
				}
			}
		}
		t.Fatalf("prepare: %v", err)
	}
	defer launcher.Stop(job)
	resp, err := http.Get(job.URL + "/items")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	html := string(body)
	if resp.StatusCode != 200 || !strings.Contains(html, "Acme Preview<!-- --> items") && !strings.Contains(html, "Acme Preview items") {
		t.Fatalf("/items answered %d without the declared site name: %.600s", resp.StatusCode, html)
	}
	for _, item := range []string{"<li>chair</li>", "<li>desk</li>", "<li>lamp</li>"} {
		if !strings.Contains(html, item) {
			t.Errorf("/items lacks %s from the seeded table: %.600s", item, html)
		}
	}
}
