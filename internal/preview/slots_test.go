package preview

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
)

// Build state is per contract: two contracts on one repository never share a slot, a
// contract's attempts do, and its base check has one apart from them.
func TestSlotsArePerContract(t *testing.T) {
	a1 := slotFor(capability.PreviewRequest{ContractID: "contract-a", Attempt: 1})
	a2 := slotFor(capability.PreviewRequest{ContractID: "contract-a", Attempt: 2})
	a0 := slotFor(capability.PreviewRequest{ContractID: "contract-a", Attempt: 0})
	b1 := slotFor(capability.PreviewRequest{ContractID: "contract-b", Attempt: 1})
	b0 := slotFor(capability.PreviewRequest{ContractID: "contract-b", Attempt: 0})
	if a1 != a2 {
		t.Errorf("a contract's attempts use %s and %s", a1, a2)
	}
	for _, other := range []string{a0, b1, b0} {
		if other == a1 {
			t.Errorf("slot %s is shared", other)
		}
	}
	if a0 == b0 {
		t.Errorf("two contracts' base checks share %s", a0)
	}
	for _, s := range []string{a1, a0, b1, b0} {
		if !slotPattern.MatchString(s) {
			t.Errorf("%q is not a slot name the launcher takes", s)
		}
	}
}

// A new slot makes room by removing the least recently used idle slots; a held one stays
// whatever its age.
func TestNewSlotPrunesIdleOnes(t *testing.T) {
	root := t.TempDir()
	l := &Launcher{cfg: Config{JobsRoot: root, MaxSlots: 3}, slots: map[string]string{}}
	dir := filepath.Join(root, slotsDir)
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"c-held", "c-oldest", "c-older", "c-recent"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "src", ".next"), 0o755); err != nil {
			t.Fatal(err)
		}
		at := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	l.slots["c-held"] = "slot-c-held-000000000000"
	l.mu.Lock()
	l.pruneSlots()
	l.mu.Unlock()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "c-held" || names[1] != "c-recent" {
		t.Fatalf("slots left %v, want the held one and the most recent (room for the new one)", names)
	}
}

// What one contract's build writes into its build state (.next) is not there for another
// contract's build on the same repository, while the same contract's next attempt finds it:
// the planted file proves the slot is reused where it should be, so its absence means
// something.
func TestContractsDoNotShareBuildState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds in the sandbox; skipped in -short")
	}
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	plant := commit(t, repo, map[string]string{"build.js": `const fs = require("fs");
fs.mkdirSync(".next", { recursive: true });
fs.writeFileSync(".next/planted.txt", "planted by contract A");
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/built.txt", "planting");
`}, "plant")
	read := commit(t, repo, map[string]string{"build.js": `const fs = require("fs");
let seen = "clean";
try { seen = fs.readFileSync(".next/planted.txt", "utf8"); } catch (e) {}
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/built.txt", seen);
`}, "read")
	remotes := localgit.Remotes{Root: filepath.Join(root, "remotes")}
	for _, sha := range []string{plant, read} {
		if _, err := remotes.Register(context.Background(), "acme", "web", repo, sha); err != nil {
			t.Fatal(err)
		}
	}
	p := &Previews{Launcher: newTinyLauncher(t, root, nil), Remotes: remotes}
	built := func(contract string, attempt int, sha string) string {
		t.Helper()
		res, err := p.Start(context.Background(), capability.PreviewRequest{ContractID: contract, Attempt: attempt,
			Repo: contracts.Repo{Owner: "acme", Name: "web"}, CommitSHA: sha})
		if err != nil || res.URL == "" {
			t.Fatalf("preview of %s attempt %d: %v %+v", contract, attempt, err, res.Build)
		}
		defer p.Stop(context.Background(), res.PreviewID)
		var who struct {
			Built string `json:"built"`
		}
		getJSON(t, res.URL+"/whoami", &who)
		return who.Built
	}
	if got := built("contract-a", 1, plant); got != "planting" {
		t.Fatalf("contract A built %q", got)
	}
	if got := built("contract-b", 1, read); got != "clean" {
		t.Errorf("contract B's build read %q from contract A's", got)
	}
	if got := built("contract-a", 2, read); got != "planted by contract A" {
		t.Errorf("contract A's repair did not reuse its own build state: %q", got)
	}
}

// Quotes of one base commit share its build: concurrent base checks of different contracts
// get one preview (one build, counted), which stops when the last lets go; a later check
// within BaseLinger finds it still up, and another tree is a build of its own. A build that
// failed is not kept: the next check builds again.
func TestBaseChecksShareOneBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds in the sandbox; skipped in -short")
	}
	root := testRoot(t)
	repo, base := tinyRepo(t, root)
	other := commit(t, repo, map[string]string{"version.txt": "two\n"}, "another tree")
	broken := commit(t, repo, map[string]string{"build.js": "process.exit(3)\n"}, "a build that fails")
	remotes := localgit.Remotes{Root: filepath.Join(root, "remotes")}
	for _, sha := range []string{base, other, broken} {
		if _, err := remotes.Register(context.Background(), "acme", "web", repo, sha); err != nil {
			t.Fatal(err)
		}
	}
	p := &Previews{Launcher: newTinyLauncher(t, root, nil), Remotes: remotes}
	check := func(contract, sha string) capability.PreviewResult {
		res, err := p.Start(context.Background(), capability.PreviewRequest{ContractID: contract, Attempt: 0,
			Repo: contracts.Repo{Owner: "acme", Name: "web"}, CommitSHA: sha})
		if err != nil || res.URL == "" {
			t.Errorf("base check of %s: %v %+v", contract, err, res.Build)
		}
		return res
	}
	results := make([]capability.PreviewResult, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = check(fmt.Sprintf("quote-%d", i), base)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if n := p.BaseBuilds(); n != 1 {
		t.Errorf("4 concurrent base checks of one tree made %d builds, want 1", n)
	}
	ids := map[string]bool{}
	for _, r := range results {
		ids[r.PreviewID] = true
		if r.URL != results[0].URL {
			t.Errorf("base checks of one tree got %s and %s", r.URL, results[0].URL)
		}
	}
	if len(ids) != 4 {
		t.Errorf("preview ids %v: each check needs its own to let go of", ids)
	}
	// Three let go: it stays up for the fourth; the fourth lets go: it stops.
	for _, r := range results[:3] {
		if err := p.Stop(context.Background(), r.PreviewID); err != nil {
			t.Fatal(err)
		}
	}
	var who struct{ Built string }
	if code := getJSON(t, results[3].URL+"/whoami", &who); code != 200 || who.Built != "built from one" {
		t.Fatalf("the shared preview after three stops: %d %q", code, who.Built)
	}
	if err := p.Stop(context.Background(), results[3].PreviewID); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(results[3].URL + "/whoami"); err == nil {
		t.Error("the shared preview still answers after every check stopped it")
	}
	// Another tree is its own build; with a linger, a later check of it finds it up.
	p.BaseLinger = time.Hour
	first := check("quote-x", other)
	if n := p.BaseBuilds(); n != 2 {
		t.Errorf("%d builds after another tree, want 2", n)
	}
	if err := p.Stop(context.Background(), first.PreviewID); err != nil {
		t.Fatal(err)
	}
	again := check("quote-y", other)
	if n := p.BaseBuilds(); n != 2 || again.URL != first.URL {
		t.Errorf("a check within the linger made build %d at %s (the kept one is %s)", n, again.URL, first.URL)
	}
	if err := p.Stop(context.Background(), again.PreviewID); err != nil {
		t.Fatal(err)
	}
	// A failed build, even with a linger, is built again by the next check.
	for i := range 2 {
		res, err := p.Start(context.Background(), capability.PreviewRequest{ContractID: fmt.Sprintf("quote-broken-%d", i), Attempt: 0,
			Repo: contracts.Repo{Owner: "acme", Name: "web"}, CommitSHA: broken})
		if err != nil || res.URL != "" || res.Build.Passed || len(res.Build.Steps) == 0 {
			t.Fatalf("base check of a commit that does not build: %v %+v", err, res)
		}
		if err := p.Stop(context.Background(), res.PreviewID); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.BaseBuilds(); n != 4 {
		t.Errorf("%d builds after two checks of a tree that does not build, want 4: a failure was kept", n)
	}
	p.Close()
	if _, err := http.Get(again.URL + "/whoami"); err == nil {
		t.Error("Close left a kept base preview answering")
	}
	if files := pidFiles(t, p.Launcher); len(files) != 0 {
		t.Errorf("processes recorded after Close: %v", files)
	}
}

// A re-verification of the same commit starts the app again from the build its first try
// made: the build's output is the same (a random value written at build time), no build step
// ran, and the result names the job it reused. A tree changed since its build, another
// contract, or another commit in the same slot builds anew; so does the first commit after
// the slot held another.
func TestReverificationStartsFromTheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds in the sandbox; skipped in -short")
	}
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	random := commit(t, repo, map[string]string{"build.js": `const fs = require("fs");
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/built.txt", String(Math.random()));
`}, "random build")
	other := commit(t, repo, map[string]string{"version.txt": "2\n"}, "another commit")
	remotes := localgit.Remotes{Root: filepath.Join(root, "remotes")}
	for _, sha := range []string{random, other} {
		if _, err := remotes.Register(context.Background(), "acme", "web", repo, sha); err != nil {
			t.Fatal(err)
		}
	}
	l := newTinyLauncher(t, root, nil)
	p := &Previews{Launcher: l, Remotes: remotes}
	type run struct{ id, built, reused, buildLog string }
	start := func(contract string, try int, sha string) run {
		t.Helper()
		res, err := p.Start(context.Background(), capability.PreviewRequest{ContractID: contract, Attempt: 1, Try: try,
			Repo: contracts.Repo{Owner: "acme", Name: "web"}, CommitSHA: sha})
		if err != nil || res.URL == "" {
			t.Fatalf("preview of %s try %d: %v %+v", contract, try, err, res.Build)
		}
		defer p.Stop(context.Background(), res.PreviewID)
		if !res.Build.Passed {
			t.Fatalf("build of %s try %d did not pass: %+v", contract, try, res.Build)
		}
		var who struct {
			Built string `json:"built"`
		}
		getJSON(t, res.URL+"/whoami", &who)
		r := run{id: res.PreviewID, built: who.Built, reused: res.Build.ReusedBuild}
		if _, err := os.Stat(filepath.Join(l.cfg.JobsRoot, logsDir, res.PreviewID, "build.log")); err == nil {
			r.buildLog = "written"
		}
		return r
	}
	first := start("contract-a", 1, random)
	if first.reused != "" || first.buildLog == "" {
		t.Fatalf("the first try reused %q, build log %q: want a build of its own", first.reused, first.buildLog)
	}
	again := start("contract-a", 2, random)
	if again.built != first.built || again.reused != first.id || again.buildLog != "" {
		t.Errorf("the re-verification served %q (first %q), reused %q (want %q), build log %q: want the first try's build, not built again",
			again.built, first.built, again.reused, first.id, again.buildLog)
	}
	// What the app ran from changed since it was built (a tracked file rewritten, as an app
	// of the executor's could at run time): the next re-verification builds anew.
	slot := filepath.Join(l.cfg.JobsRoot, slotsDir, slotFor(capability.PreviewRequest{ContractID: "contract-a", Attempt: 1}))
	if err := os.WriteFile(filepath.Join(slot, "src", "version.txt"), []byte("rewritten at run time\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tampered := start("contract-a", 3, random); tampered.reused != "" || tampered.buildLog == "" {
		t.Errorf("after its tree was rewritten, the re-verification reused %q (build log %q): want a build of its own", tampered.reused, tampered.buildLog)
	}
	if b := start("contract-b", 1, random); b.reused != "" || b.built == first.built {
		t.Errorf("another contract's preview of the same commit reused %q and served %q (contract A's %q)", b.reused, b.built, first.built)
	}
	if o := start("contract-a", 1, other); o.reused != "" {
		t.Errorf("another commit in the slot reused %q", o.reused)
	}
	if back := start("contract-a", 4, random); back.reused != "" || back.built == first.built {
		t.Errorf("after the slot built another commit, the first one reused %q and served %q: want a new build", back.reused, back.built)
	}
}
