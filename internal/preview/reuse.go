package preview

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// A verification_error is re-verified on the same commit; it used to build that commit again
// in the contract's slot, though nothing that goes into the build had changed. A slot now
// remembers the build it last started an app from, and a Prepare of the same commit with the
// same options starts the app again from that work tree: no checkout, install, build, lint or
// test. A slot is one contract's (or one base tree's), so only that contract's own code wrote
// what is reused. The record lives in memory: a restarted worker builds again, and a slot
// that begins any other build forgets it first.

// slotBuild is a slot's last started build.
type slotBuild struct {
	key     string
	jobID   string
	sha     string
	build   BuildResult
	pm, ran string
	appDir  string
	env     []string
}

// reuseKey names everything that goes into a build: the same commit built with the same
// options is the same build.
func reuseKey(sha string, opts Options) string {
	raw, _ := json.Marshal(struct {
		SHA         string
		AppDir      string
		PM, PMV     string
		Env         any
		Release     string
		Environment string
		Preexisting any
		BaseCheck   bool
	}{sha, opts.AppDir, opts.PackageManager, opts.PackageManagerVersion, opts.Env, opts.Release, opts.Environment, opts.Preexisting, opts.BaseCheck})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// reusable: a build can be started again only from a slot, and only without services (a
// database is made and seeded for each preview, by the build's steps).
func reusable(opts Options) bool { return opts.Slot != "" && len(opts.Services) == 0 }

// takeBuild is called with l.mu held as a slot is claimed: the slot's record when it is of
// key, and nil (the record forgotten, since the slot is about to be rebuilt) otherwise.
func (l *Launcher) takeBuild(slot, key string) *slotBuild {
	rec, ok := l.built[slot]
	if ok && rec.key == key && key != "" {
		return &rec
	}
	delete(l.built, slot)
	return nil
}

// remember records the build a slot's app was started from.
func (l *Launcher) remember(ws *workspace, key string, job *Job) {
	if ws.slot == "" || key == "" {
		return
	}
	rec := slotBuild{key: key, jobID: job.ID, sha: job.SHA, build: job.Build, pm: job.PackageManager, ran: job.PackageManagerRan, appDir: job.AppDir, env: slices.Clone(job.env)}
	rec.build.Steps = slices.Clone(job.Build.Steps)
	rec.build.DirtyFiles = slices.Clone(job.Build.DirtyFiles)
	l.mu.Lock()
	if l.slots[ws.slot] == ws.id {
		if l.built == nil {
			l.built = map[string]slotBuild{}
		}
		l.built[ws.slot] = rec
	}
	l.mu.Unlock()
}

// forget drops a slot's record after its app could not be started from it again: the next
// try builds anew.
func (l *Launcher) forget(slot, jobID string) {
	l.mu.Lock()
	if rec, ok := l.built[slot]; ok && rec.jobID == jobID {
		delete(l.built, slot)
	}
	l.mu.Unlock()
}

// unchangedSince: the slot's work tree still differs from its commit exactly as it did when
// rec was built. An app that ran from it may have rewritten its own files; what it serves
// after that is not what the commit builds, so such a tree is built anew.
func (l *Launcher) unchangedSince(ws *workspace, rec *slotBuild) bool {
	now, err := dirtyFiles(ws, rec.appDir)
	return err == nil && slices.Equal(now, rec.build.DirtyFiles)
}

// reuse fills job from the slot's record, for starting the app again.
func (rec *slotBuild) reuse(job *Job) {
	job.SHA, job.PackageManager, job.PackageManagerRan, job.env = rec.sha, rec.pm, rec.ran, slices.Clone(rec.env)
	job.Build = rec.build
	job.Build.Steps = slices.Clone(rec.build.Steps)
	job.Build.DirtyFiles = slices.Clone(rec.build.DirtyFiles)
	job.ReusedBuild = rec.jobID
}
