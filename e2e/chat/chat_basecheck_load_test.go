package chat_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/workflows/contractapi"
)

// TestChatQuotesWithBaseCheckUnderLoad is issue 29's load must-show: ten uAgents reference
// agents ask `signoff dev` for a task on one repository at the same moment, with the base
// check on (the default). Every one ends with a quote whose base check ran on the queues, none
// with a refusal a busy host caused, and the base commit was built once for all ten: base
// checks of one tree share one build. Time to quote is logged; BenchmarkChatQuotesWithBaseCheck
// measures it on a quiet machine.
//
// `go tool task stress` (SIGNOFF_STRESS=1) runs it with a CPU hog in this test too, as
// `go tool task test:loaded` runs the whole suite beside two. In the suite the hog is left out:
// for the six minutes it ran, it took the CPU of whatever package ran beside this one.
func TestChatQuotesWithBaseCheckUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process with ten Python uAgents peers, builds the fixture app and drives Chromium")
	}
	hog := os.Getenv("SIGNOFF_STRESS") != ""
	waits, builds := chatQuotesWithBaseCheck(t, hog)
	if len(builds) != 1 {
		t.Errorf("%d base builds for %d quotes of one base commit, want 1: %v", len(builds), len(waits), builds)
	}
	t.Logf("%d quotes with the base check on, CPU hog running: %v: time to quote median %.0f s, max %.0f s, %d base build(s)",
		len(waits), hog, waits[len(waits)/2], waits[len(waits)-1], len(builds))
}

// BenchmarkChatQuotesWithBaseCheck is time to quote for ten requesters at once with the base
// check on (issue 29's goal: median under 90 s on 2 cores), reported, not asserted.
func BenchmarkChatQuotesWithBaseCheck(b *testing.B) {
	var med, most float64
	for range b.N {
		waits, _ := chatQuotesWithBaseCheck(b, false)
		med, most = waits[len(waits)/2], waits[len(waits)-1]
	}
	b.ReportMetric(med, "s-median/quote")
	b.ReportMetric(most, "s-max/quote")
}

// chatQuotesWithBaseCheck has ten uAgents peers ask `signoff dev` (base check on) for a task
// on the finance fixture at one moment, with a CPU hog when hog is set. It fails unless every
// one is quoted after a base check on the queues, and returns the times to quote in seconds,
// sorted, and the base builds' job ids.
func chatQuotesWithBaseCheck(tb testing.TB, hog bool) (waits []float64, builds []string) {
	tb.Helper()
	requireChatBuildSetup(tb)
	py := chatVenvPython(tb)
	const peers = 10
	dataDir := tb.TempDir()
	dev := startChatDev(tb, dataDir)
	stopHog := func() {}
	if hog {
		stopHog = cpuHog(tb)
	}
	defer stopHog()
	lp := startLoadPeers(tb, py, dev.loopback, dev.agent, peers, "make the Watchlist page work well on mobile")

	lp.wait(tb, "a quote or a refusal for every peer", 30*time.Minute, func(ev [][]loadEvent) bool {
		for _, e := range ev {
			if !slices.ContainsFunc(e, finalAnswer) {
				return false
			}
		}
		return true
	})
	stopHog()
	failed := false
	lp.mu.Lock()
	for i, ev := range lp.events {
		var sent, end loadEvent
		for _, e := range ev {
			switch {
			case e.Event == "sent":
				sent = e
			case finalAnswer(e) && end.Event == "":
				end = e
			}
		}
		switch {
		case !strings.HasPrefix(end.Text, "Quoted contract"):
			tb.Errorf("peer %d was not quoted: %q", i, end.Text)
			failed = true
		case !strings.Contains(end.Text, "Base check (on the execute and verify queues): "):
			tb.Errorf("peer %d's quote ran no base check on the queues:\n%s", i, end.Text)
			failed = true
		default:
			waits = append(waits, end.seen.Sub(wall(sent.T0Wall)).Seconds())
		}
	}
	lp.mu.Unlock()
	if failed {
		tb.Fatalf("%s\n--- signoff dev ---\n%s", lp.dump(), dev.Output())
	}
	// Every base check's preview is logged under its job id; a base build's job is in a slot
	// named for its tree.
	jobs, err := datadir.PreviewJobsRoot(dataDir)
	if err != nil {
		tb.Fatal(err)
	}
	logs, err := os.ReadDir(filepath.Join(jobs, "logs"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range logs {
		if strings.HasPrefix(e.Name(), "slot-b-") {
			builds = append(builds, e.Name())
		}
	}
	slices.Sort(waits)
	return waits, builds
}

// TestChatQuoteSurvivesAKillDuringItsBuild: `signoff dev` is SIGKILLed while a chat quote's
// base build runs, and started again on the same data dir. The requester gets the quote once,
// and the build that was cut off leaves nothing that stops the next one (a Next.js build lock
// in the shared base slot was the failure seen before).
func TestChatQuoteSurvivesAKillDuringItsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process, SIGKILLs it mid-build, builds the fixture app and drives Chromium")
	}
	requireChatBuildSetup(t)
	py := chatVenvPython(t)
	dataDir := t.TempDir()
	dev := startChatDev(t, dataDir)
	jobs, err := datadir.PreviewJobsRoot(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	lp := startLoadPeers(t, py, dev.loopback, dev.agent, 1, "make the Watchlist page work well on mobile")

	// The base build's step runs while its pid file is on record.
	building := filepath.Join(jobs, "pids", "slot-b-*-build-*.json")
	for deadline := time.Now().Add(10 * time.Minute); ; {
		if m, _ := filepath.Glob(building); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no base build started within 10m:\n%s\n%s", lp.dump(), dev.Output())
		}
		time.Sleep(20 * time.Millisecond) // waiting for a file another process writes
	}
	before := dev.Output()
	dev.Kill()
	dev.Start()
	signoffproc.WaitOutput(t, dev.Proc, "Ctrl-C stops.", 3*time.Minute)

	quoted := func(e loadEvent) bool { return e.Event == "chat" && strings.HasPrefix(e.Text, "Quoted contract") }
	// A refusal ends the wait too: nothing more comes after it, so waiting on would only hide it.
	lp.wait(t, "a quote or a refusal after the restart", 15*time.Minute, func(ev [][]loadEvent) bool { return slices.ContainsFunc(ev[0], finalAnswer) })
	lp.mu.Lock()
	ok := slices.ContainsFunc(lp.events[0], quoted)
	lp.mu.Unlock()
	if !ok {
		t.Fatalf("refused, not quoted, after the restart:\n%s\n--- signoff dev ---\n%s%s", lp.dump(), dev.Output(), baseBuildLogs(jobs))
	}
	// Exactly once: the quote workflow has ended, so nothing more is coming, and one quote came.
	lp.mu.Lock()
	var sent, started loadEvent
	n := 0
	for _, e := range lp.events[0] {
		switch {
		case e.Event == "sent":
			sent = e
		case e.Event == "started":
			started = e
		case quoted(e):
			n++
		}
	}
	lp.mu.Unlock()
	c := signoffproc.DialDev(t, dataDir, dev.temporal)
	run := c.GetWorkflow(context.Background(), contractapi.QuoteWorkflowID(started.Address, sent.Session, sent.MsgID), "")
	if err := run.Get(context.Background(), nil); err != nil {
		t.Fatalf("the quote workflow: %v", err)
	}
	lp.mu.Lock()
	n = 0
	for _, e := range lp.events[0] {
		if quoted(e) {
			n++
		}
	}
	lp.mu.Unlock()
	if n != 1 {
		t.Errorf("%d quotes for one request across the kill, want 1:\n%s", n, lp.dump())
	}
	// The cut-off build left no lock the next build tripped on.
	logs, _ := filepath.Glob(filepath.Join(jobs, "logs", "slot-b-*", "build.log"))
	if len(logs) < 2 {
		t.Errorf("%d base build logs, want the one cut off and the one after the restart", len(logs))
	}
	for _, l := range logs {
		if b, _ := os.ReadFile(l); strings.Contains(string(b), "already running") {
			t.Errorf("%s: %s", l, b)
		}
	}
	if strings.Contains(before+dev.Output(), "already running") {
		t.Errorf("signoff dev reported a build already running:\n%s\n%s", before, dev.Output())
	}
}

// baseBuildLogs is the tail of every base build's log under jobs, for a failure message: the
// test's folders, and the logs with them, are gone once it ends.
func baseBuildLogs(jobs string) string {
	logs, _ := filepath.Glob(filepath.Join(jobs, "logs", "slot-b-*", "*.log"))
	var b strings.Builder
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			fmt.Fprintf(&b, "\n--- %s: %v", l, err)
			continue
		}
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "\n--- %s (%d bytes shown) ---\n%s", l, len(data), data)
	}
	return b.String()
}

// finalAnswer is a requester's last answer to a request: its quote, or any answer that is not
// one (a refusal, a host too busy to check the base).
func finalAnswer(e loadEvent) bool {
	return e.Event == "chat" && (strings.HasPrefix(e.Text, "Quoted contract") || strings.Contains(e.Text, "No contract") ||
		strings.Contains(e.Text, "could not") || strings.Contains(e.Text, "cannot") || strings.Contains(e.Text, "is not ready"))
}

// requireChatBuildSetup fails, naming the task, without what a chat quote with its base check
// needs: the local Stripe test double, the fixture's dependencies and the browser.
func requireChatBuildSetup(tb testing.TB) {
	tb.Helper()
	root := signoffproc.RepoRoot()
	signoffproc.RequireSetup(tb, filepath.Join(root, ".bin", "stripe-mock"), "go tool task stripe:setup")
	signoffproc.RequireSetup(tb, filepath.Join(root, ".cache", "finance-deps", "node_modules", "next"), "go tool task fixture:setup")
	signoffproc.RequireSetup(tb, filepath.Join(root, ".cache", "pw-driver", "1.64.1", "package", "cli.js"), "go tool task browser:setup")
}
