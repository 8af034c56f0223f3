package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without bwrap, New says which tool is missing and how to install it.
func TestNewWithoutBwrap(t *testing.T) {
	_, err := New(Config{Bwrap: "/nonexistent/bwrap"})
	if err == nil {
		t.Fatal("New with a missing bwrap succeeded")
	}
	for _, w := range []string{"bwrap", "/nonexistent/bwrap", "bubblewrap", "go tool task setup"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	// A bwrap that is there but is not bwrap fails the probe run, not later.
	if _, err := New(Config{Bwrap: "/usr/bin/false"}); err == nil {
		t.Error("New with /usr/bin/false as bwrap succeeded")
	}
}

// Without slirp4netns, NetNone still works and NetEgress is refused by name.
func TestEgressWithoutSlirp(t *testing.T) {
	newRunner(t)
	r, err := New(Config{Slirp4netns: "/nonexistent/slirp4netns"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Describe(), "egress: unavailable") {
		t.Errorf("Describe: %s", r.Describe())
	}
	s := probeSpec(t, "proc")
	s.Net = NetEgress
	if _, err := r.Start(testCtx(t), s); err == nil || !strings.Contains(err.Error(), "slirp4netns") || !strings.Contains(err.Error(), "go tool task setup") {
		t.Errorf("NetEgress without slirp4netns: %v", err)
	}
}

// Specs that would weaken the sandbox are refused before anything runs.
func TestSpecRefused(t *testing.T) {
	r := &Runner{}
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	ok := Spec{Argv: []string{"/usr/bin/true"}, Dir: "/tmp", UID: 1000, GID: 1000}
	if os.Geteuid() != 0 {
		ok.UID, ok.GID = uint32(os.Geteuid()), uint32(os.Getegid())
	}
	for name, mutate := range map[string]func(*Spec){
		"root uid":          func(s *Spec) { s.UID = 0 },
		"root gid":          func(s *Spec) { s.GID = 0 },
		"no argv":           func(s *Spec) { s.Argv = nil },
		"relative writable": func(s *Spec) { s.Writable = []string{"job"} },
		"writable /":        func(s *Spec) { s.Writable = []string{"/"} },
		"readonly /":        func(s *Spec) { s.ReadOnly = []string{"/."} },
		"writable /usr":     func(s *Spec) { s.Writable = []string{"/usr"} },
		"readonly /proc/1":  func(s *Spec) { s.ReadOnly = []string{"/proc/1"} },
		"missing":           func(s *Spec) { s.ReadOnly = []string{"/nonexistent"} },
		"symlink":           func(s *Spec) { s.Writable = []string{link} },
		"dir outside binds": func(s *Spec) { s.Dir = "/root" },
		"relative dir":      func(s *Spec) { s.Dir = "tmp" },
		"env without =":     func(s *Spec) { s.Env = []string{"PATH"} },
		"unknown network":   func(s *Spec) { s.Net = 7 },
		"negative memory":   func(s *Spec) { s.Limits.Memory = -1 },
	} {
		s := ok
		mutate(&s)
		if err := r.check(&s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := r.check(&ok); err != nil {
		t.Errorf("control spec refused: %v", err)
	}
}

// Describe names what is enforced; on this machine that includes the cgroup limits.
func TestDescribe(t *testing.T) {
	d := newRunner(t).Describe()
	t.Log(d)
	for _, w := range []string{"bubblewrap", "no_new_privs", "limits: memory and pids by cgroup", "egress: slirp4netns"} {
		if !strings.Contains(d, w) {
			t.Errorf("Describe lacks %q: %s", w, d)
		}
	}
}
