package preview

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/sandbox"
)

// A contract whose app reads a database at build or render gets a throwaway PostgreSQL
// (Debian's package) for its preview: initialised for the job, run by the preview user in a
// sandbox of its own with no network at all, reachable only through a Unix socket in a
// folder the job's other steps bind, and removed with the job. Nothing of it survives the
// job or is seen by another: each job has its own folder and server.

// pgDir holds each job's database folder; its names are short, as a socket's path is
// bounded (108 bytes on Linux).
const pgDir = "pg"

// pgUser is the database role the app connects as (trust authentication: the socket is
// reachable from the job's own sandboxes only).
const pgUser = "preview"

// maxSeedBytes bounds the seed file the preview runs.
const maxSeedBytes = 4 << 20

// FindPostgres is the folder of the newest PostgreSQL server Debian installed
// (/usr/lib/postgresql/<major>/bin, holding initdb, postgres and psql), or "".
func FindPostgres() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestMajor := "", -1
	for _, d := range dirs {
		var major int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(d)), "%d", &major); err != nil {
			continue
		}
		ok := true
		for _, tool := range []string{"initdb", "postgres", "psql"} {
			if fi, err := os.Stat(filepath.Join(d, tool)); err != nil || fi.Mode()&0o111 == 0 {
				ok = false
			}
		}
		if ok && major > bestMajor {
			best, bestMajor = d, major
		}
	}
	return best
}

// jobPgDir is a job's database folder, named by the random part of its id.
func (l *Launcher) jobPgDir(jobID string) string {
	return filepath.Join(l.cfg.JobsRoot, pgDir, jobID[len(jobID)-12:])
}

// startServices starts the services the contract names, before the build, and returns the
// steps it ran; the preview environment then knows their addresses. A step that failed is
// the repository's (its seed); an error is Signoff's.
func (l *Launcher) startServices(ctx context.Context, ws *workspace, job *Job, services []string) ([]Step, error) {
	if !slices.Contains(services, contracts.ServicePostgres) {
		return nil, nil
	}
	bin := l.cfg.Postgres
	if bin == "" {
		return nil, errors.New("preview: the contract starts a PostgreSQL for its app, and this worker has none: run `go tool task sandbox:postgres` (Debian's PostgreSQL server)")
	}
	dir := l.jobPgDir(ws.id)
	socket := filepath.Join(dir, ".s.PGSQL.5432")
	if len(socket) >= 100 {
		return nil, fmt.Errorf("preview: the database socket %s is too long for a Unix socket: use a shorter jobs root", socket)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o711); err != nil {
		return nil, fmt.Errorf("preview: database folder: %w", err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("preview: database folder: %w", err)
	}
	if err := l.ownDir(dir); err != nil {
		return nil, err
	}
	ws.services = []string{dir}
	env := l.env(ws, "LC_ALL=C.UTF-8")
	data := filepath.Join(dir, "data")
	init := l.runStepNet(ctx, ws, "postgres", dir, env, nil, sandbox.NetNone,
		filepath.Join(bin, "initdb"), "-D", data, "-U", pgUser, "--auth=trust", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C.UTF-8")
	if init.Status != StatusPassed {
		return []Step{init}, fmt.Errorf("preview: initialise the job's PostgreSQL failed (log %s)", init.Log)
	}
	logFile, err := os.OpenFile(filepath.Join(ws.logs, "postgres-server.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return []Step{init}, fmt.Errorf("preview: database log: %w", err)
	}
	defer logFile.Close()
	begin := time.Now()
	p, err := spawn(l.sb, l.spec(ws, dir, env, nil, logFile, sandbox.NetNone, filepath.Join(bin, "postgres"), "-D", data, "-k", dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "dynamic_shared_memory_type=mmap", "-c", "max_connections=40", "-c", "shared_buffers=16MB"), l.pidDir(), ws.id, "postgres")
	if err != nil {
		return []Step{init}, err
	}
	l.mu.Lock()
	l.services[ws.id] = p
	l.mu.Unlock()
	job.ServicePID = p.sp.Pid()
	job.ServiceTicks, _ = startTicks(job.ServicePID)
	if err := waitPostgres(ctx, data, p, l.cfg.StartTimeout); err != nil {
		return []Step{init}, fmt.Errorf("preview: the job's PostgreSQL did not start: %w (log %s)", err, logFile.Name())
	}
	init.Duration += time.Since(begin)
	init.Detail = "a throwaway PostgreSQL for this job, at " + contracts.PostgresURLVar
	q := url.Values{"host": {dir}}
	job.postgresURL = "postgresql://" + pgUser + "@localhost/postgres?" + q.Encode()
	steps := []Step{init}
	seed := filepath.Join(ws.src, filepath.FromSlash(contracts.PreviewSeedFile))
	fi, err := os.Lstat(seed)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return steps, nil
	case err != nil:
		return steps, fmt.Errorf("preview: seed: %w", err)
	case !fi.Mode().IsRegular():
		return append(steps, Step{Name: "seed", Status: StatusFailed, ExitCode: -1, Cause: contracts.PreviewSeedFile + " is not a regular file",
			Next: "commit the SQL the pages need as a plain file"}), nil
	case fi.Size() > maxSeedBytes:
		return append(steps, Step{Name: "seed", Status: StatusFailed, ExitCode: -1, Cause: fmt.Sprintf("%s is %d bytes, at most %d", contracts.PreviewSeedFile, fi.Size(), maxSeedBytes),
			Next: "keep the seed to the rows the pages need"}), nil
	}
	st := l.runStepNet(ctx, ws, "seed", ws.src, append(env, "PGHOST="+dir, "PGUSER="+pgUser, "PGDATABASE=postgres"), nil, sandbox.NetNone,
		filepath.Join(bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", contracts.PreviewSeedFile)
	return append(steps, st), nil
}

// waitPostgres waits until the server says it accepts connections: the eighth line of its
// postmaster.pid reads "ready".
func waitPostgres(ctx context.Context, data string, p *proc, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := readLimited(filepath.Join(data, "postmaster.pid"), 4096); err == nil {
			if lines := strings.Split(string(b), "\n"); len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("it exited (%v)", p.err)
		case <-deadline.C:
			return fmt.Errorf("not ready within %s", limit)
		case <-tick.C:
		}
	}
}

// stopServices ends a job's services and removes their folder.
func (l *Launcher) stopServices(job *Job) {
	if job == nil || len(job.ID) < 12 {
		return
	}
	l.mu.Lock()
	p := l.services[job.ID]
	delete(l.services, job.ID)
	l.mu.Unlock()
	switch {
	case p != nil:
		p.stop()
	case job.ServicePID > 1:
		l.killRecorded(job.ServicePID, job.ServiceTicks)
	}
	_ = os.RemoveAll(l.jobPgDir(job.ID))
}
