package preview

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// TestPostgresForTheJob: a contract that starts PostgreSQL gets a server of its own, seeded
// from the commit's .signoff/preview.sql before the build; the build and the running app
// reach it at the address the declared environment names. Another job sees nothing of it,
// and Stop ends the server and removes its data.
func TestPostgresForTheJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server; the unit tier starts none")
	}
	pg := FindPostgres()
	if pg == "" {
		t.Fatal("no PostgreSQL server: run `go tool task sandbox:postgres`")
	}
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	l := newTinyLauncher(t, root, nil)
	sha := commit(t, repo, map[string]string{
		contracts.PreviewSeedFile: "create table items (name text);\ninsert into items values ('beta'), ('alpha');\n",
		"build.js": `const fs = require("fs");
const rows = require("child_process").execFileSync(process.env.PSQL, [process.env.DATABASE_URL, "-Atc", "select count(*) from items"], { encoding: "utf8" }).trim();
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/built.txt", "built with " + rows + " rows for " + process.env.SITE_NAME);
`,
	}, "a page that reads a table")
	env := map[string]string{"DATABASE_URL": contracts.PostgresURLRef, "SITE_NAME": "Acme Preview", "PSQL": filepath.Join(pg, "psql")}
	job, err := l.Prepare(context.Background(), repo, sha, Options{Env: env, Services: []string{contracts.ServicePostgres}})
	if err != nil {
		logFailedSteps(t, job)
		t.Fatalf("prepare: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			l.Stop(job)
		}
	}()
	if st := stepByName(job, "postgres"); st.Status != StatusPassed {
		t.Errorf("postgres step %+v", st)
	}
	if st := stepByName(job, "seed"); st.Status != StatusPassed {
		t.Errorf("seed step %+v", st)
	}
	var who struct{ Built string }
	if code := getJSON(t, job.URL+"/whoami", &who); code != 200 || who.Built != "built with 2 rows for Acme Preview" {
		t.Errorf("the build saw %q (%d)", who.Built, code)
	}
	var db struct{ Rows, Error string }
	if code := getJSON(t, job.URL+"/db", &db); code != 200 || db.Rows != "alpha,beta" {
		t.Errorf("the app read %q (%d, %s)", db.Rows, code, db.Error)
	}
	var appEnv map[string]string
	getJSON(t, job.URL+"/env", &appEnv)
	url := appEnv[contracts.PostgresURLVar]
	if !strings.HasPrefix(url, "postgresql://preview@localhost/postgres?host=") || appEnv["DATABASE_URL"] != url {
		t.Fatalf("the app's database address %q, DATABASE_URL %q", url, appEnv["DATABASE_URL"])
	}
	dir := l.jobPgDir(job.ID)

	// Another job, told the first one's address, reaches neither its socket nor its files.
	other, err := l.Prepare(context.Background(), repo, sha, Options{Env: map[string]string{"DATABASE_URL": url, "PSQL": env["PSQL"]}})
	if err == nil {
		defer l.Stop(other)
		t.Fatalf("a job without the service built a commit whose build reads the database")
	}
	if st := stepByName(other, "build"); st.Status != StatusFailed {
		t.Errorf("the other job's build %+v", st)
	} else if log, _ := os.ReadFile(st.Log); !strings.Contains(string(log), "No such file or directory") || !strings.Contains(st.Next, "DATABASE_URL="+contracts.PostgresURLRef) {
		t.Errorf("the other job's build (next %q) log: %s", st.Next, tail(log, 600))
	}

	pid := job.ServicePID
	if pid <= 1 || !processAlive(pid) {
		t.Fatalf("database server pid %d not running", pid)
	}
	if err := l.Stop(job); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if processAlive(pid) {
		t.Errorf("database server %d outlived its job", pid)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the job's database folder is still there: %v", err)
	}
}

// TestPostgresSeedFailureIsTheRepositorys: SQL that fails is a failed seed step with the
// line that says why, not Signoff's error; nothing of the job is left running.
func TestPostgresSeedFailureIsTheRepositorys(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server; the unit tier starts none")
	}
	if FindPostgres() == "" {
		t.Fatal("no PostgreSQL server: run `go tool task sandbox:postgres`")
	}
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	l := newTinyLauncher(t, root, nil)
	sha := commit(t, repo, map[string]string{contracts.PreviewSeedFile: "insert into missing values (1);\n"}, "a seed for a table that is not there")
	job, err := l.Prepare(context.Background(), repo, sha, Options{Services: []string{contracts.ServicePostgres}})
	var bf *BuildFailedError
	if !errors.As(err, &bf) || bf.Step != "seed" || !strings.Contains(bf.Cause, `relation "missing" does not exist`) || !strings.Contains(bf.Next, "make it create the tables it fills") {
		t.Fatalf("err = %v, want the seed step failing with its cause and what to do", err)
	}
	if job.ServicePID > 1 && processAlive(job.ServicePID) {
		t.Errorf("database server %d left running after a failed build", job.ServicePID)
	}
	if files := pidFiles(t, l); len(files) != 0 {
		t.Errorf("processes recorded after a failed build: %v", files)
	}
}
