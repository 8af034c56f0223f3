// Package sandbox runs repository code (install scripts, builds, the app) under
// bubblewrap, so that nothing the code does can reach the verdict: it sees a minimal
// read-only root plus the binds its caller names, its own pids, its own network,
// runs as an unprivileged host uid without capabilities, and is bounded by cgroup
// limits. When Wait returns, nothing it started survives, and a worker killed outright
// takes its sandboxes with it (reaper.go).
//
// The only ways in are the ones the caller holds: the Spec's binds and Stdin, and
// Process.DialContext / Process.Forward into the sandbox's own network namespace.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// setupHint ends every missing-tool error: the project's setup installs both tools.
const setupHint = "install it with `go tool task setup` (apt-get install bubblewrap slirp4netns nftables)"

// Network chooses what the sandbox can reach.
type Network int

const (
	// NetNone leaves only the namespace's own loopback: no route anywhere.
	NetNone Network = iota
	// NetEgress attaches slirp4netns with --disable-host-loopback: outbound to public
	// addresses (the package registry), never to the host's own addresses or private,
	// link-local, CGNAT or multicast ranges (denyHostRules).
	NetEgress
)

func (n Network) String() string {
	switch n {
	case NetNone:
		return "none"
	case NetEgress:
		return "egress"
	}
	return fmt.Sprintf("Network(%d)", int(n))
}

// ParseNetwork reads a network by the name String gives it ("egress" or "none"): the one
// parser of --install-network and SIGNOFF_EXECUTOR_NETWORK.
func ParseNetwork(s string) (Network, error) {
	for _, n := range []Network{NetEgress, NetNone} {
		if s == n.String() {
			return n, nil
		}
	}
	return NetNone, fmt.Errorf("%q: want egress or none", s)
}

// Defaults for a zero Limits field.
const (
	DefaultMemory int64 = 4 << 30
	DefaultPids         = 1024
)

// Limits bound one sandbox. Memory and Pids are enforced by a cgroup per Process
// (see Runner.Describe for whether this machine enforces them).
type Limits struct {
	// Memory is the cgroup memory limit in bytes, swap included where the kernel
	// accounts it; 0 means DefaultMemory. Going over gets a process killed.
	Memory int64
	// Pids bounds tasks (processes and threads, bwrap's own two included); 0 means
	// DefaultPids.
	Pids int
	// Wall kills the sandbox after this long; 0 leaves it to the Start context, which
	// callers already bound per step.
	Wall time.Duration
	// Disk and Files bound what the Writable folders hold while the command runs: bytes in
	// use (each inode once, what was there before included) and inodes; 0 means DefaultDisk
	// and DefaultFiles. Going over, or folders that cannot be measured, gets the sandbox
	// killed (ErrDiskLimit); the folders are measured every few seconds (see quota.go), so
	// a fast writer overshoots by what it writes in between.
	Disk  int64
	Files int
}

func (l Limits) withDefaults() Limits {
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.Pids == 0 {
		l.Pids = DefaultPids
	}
	if l.Disk == 0 {
		l.Disk = DefaultDisk
	}
	if l.Files == 0 {
		l.Files = DefaultFiles
	}
	return l
}

// Spec is one command to run in a fresh sandbox.
type Spec struct {
	Argv []string
	// Dir is the working directory: "/", "/tmp", or inside a Writable or ReadOnly bind.
	Dir string
	// Env is the whole environment; nothing of the worker's is inherited. bwrap adds
	// only PWD=Dir, as a shell would.
	Env []string
	// Writable host directories are bound read-write at the same path (the job folder).
	Writable []string
	// ReadOnly host paths are bound read-only at the same path (toolchain, shared
	// node_modules, the CLI binary's directory). Binds are mounted shallowest first,
	// so a ReadOnly inside a Writable stays read-only, and the other way round.
	ReadOnly []string
	Net      Network
	Limits   Limits
	// UID and GID are the unprivileged host user the sandbox runs as; 0 is refused.
	UID, GID uint32
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// Config locates the tools; zero values find them.
type Config struct {
	Bwrap       string // "" looks up bwrap on PATH, then /usr/bin/bwrap
	Slirp4netns string // "" looks up slirp4netns on PATH, then /usr/bin/slirp4netns
	Nft         string // "" looks up nft on PATH, then /usr/bin/nft
	// CgroupRoot is where cgroupfs is mounted; "" means /sys/fs/cgroup, and "-" turns
	// cgroup limits off (Describe then says Memory and Pids are not enforced).
	CgroupRoot string
	// Off runs commands without any sandbox, only dropping to Spec's uid in a process
	// group of their own: the operator's explicit choice on a machine without user
	// namespaces. Describe says so, and callers record it in what they sign.
	Off bool
}

// Runner starts sandboxes. It is safe for concurrent use.
type Runner struct {
	off                 bool
	bwrap, bwrapVersion string
	slirp, slirpVersion string
	slirpErr            error // why NetEgress is unavailable, if it is
	nft                 string
	cg                  *cgroups
	cgErr               error // why limits are not enforced, if they are not
}

// New finds bubblewrap and proves it works here with a real sandboxed run, so a
// machine without unprivileged user namespaces fails at startup, not mid-verdict.
func New(cfg Config) (*Runner, error) {
	if cfg.Off {
		return &Runner{off: true}, nil
	}
	r := &Runner{}
	var err error
	if r.bwrap, err = findTool(cfg.Bwrap, "bwrap", "bubblewrap"); err != nil {
		return nil, err
	}
	if r.bwrapVersion, err = toolVersion(r.bwrap); err != nil {
		return nil, fmt.Errorf("sandbox: bwrap at %s does not run (%w); %s", r.bwrap, err, setupHint)
	}
	if r.slirp, r.slirpErr = findTool(cfg.Slirp4netns, "slirp4netns", "slirp4netns"); r.slirpErr == nil {
		if r.slirpVersion, err = toolVersion(r.slirp); err != nil {
			r.slirpErr = fmt.Errorf("sandbox: slirp4netns at %s does not run (%w); %s", r.slirp, err, setupHint)
		}
	}
	// Egress without deny rules would reach services bound to the host's own addresses.
	if r.slirpErr == nil {
		if os.Geteuid() != 0 {
			r.slirpErr = errors.New("sandbox: egress needs a root worker, to load the rules that keep the host's own addresses out of reach")
		} else if r.nft, err = findTool(cfg.Nft, "nft", "nftables"); err != nil {
			r.slirpErr = err
		}
	}
	if cfg.CgroupRoot == "-" {
		r.cgErr = errors.New("turned off by Config.CgroupRoot")
	} else {
		root := cfg.CgroupRoot
		if root == "" {
			root = "/sys/fs/cgroup"
		}
		r.cg, r.cgErr = openCgroups(root)
	}
	if err := r.probe(); err != nil {
		return nil, err
	}
	return r, nil
}

// probe runs /usr/bin/true through the whole Start path (cgroup, info and block fds)
// as the overflow uid, which every kernel has.
func (r *Runner) probe() error {
	uid, gid := uint32(65534), uint32(65534)
	if os.Geteuid() != 0 {
		uid, gid = uint32(os.Geteuid()), uint32(os.Getegid())
	}
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := r.Start(ctx, Spec{
		Argv: []string{"/usr/bin/true"}, Dir: "/", UID: uid, GID: gid,
		Limits: Limits{Memory: 64 << 20, Pids: 16}, Stderr: &stderr,
	})
	if err == nil {
		err = p.Wait()
	}
	if err != nil {
		return fmt.Errorf("sandbox: bwrap %s cannot build a sandbox here (unprivileged user namespaces must work; check sysctl user.max_user_namespaces): %w: %s",
			r.bwrap, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Describe is one line for status and evidence: what is isolated, which limits hold.
func (r *Runner) Describe() string {
	if r.off {
		return offDescription
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: namespaces user+pid+net+ipc+uts+cgroup+mount, no capabilities, no_new_privs, nested userns disabled, read-only minimal root, uid dropped before bwrap; ", r.bwrapVersion)
	if r.cg != nil {
		fmt.Fprintf(&b, "limits: memory and pids by %s", r.cg.describe())
	} else {
		fmt.Fprintf(&b, "limits: memory and pids NOT enforced (%v)", r.cgErr)
	}
	b.WriteString("; wall: Limits.Wall or the Start context; ")
	if r.slirpErr == nil {
		fmt.Fprintf(&b, "egress: %s with host loopback disabled and the host's own and link-local addresses rejected", r.slirpVersion)
	} else {
		b.WriteString("egress: unavailable (slirp4netns missing)")
	}
	return b.String()
}

func findTool(path, name, pkg string) (string, error) {
	if path == "" {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		path = "/usr/bin/" + name
		if _, err := os.Stat(path); err != nil {
			path = "/usr/sbin/" + name // nft lives here; a worker's PATH may lack sbin
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s not found (%w); Debian package %s: %s", name, err, pkg, setupHint)
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("sandbox: %s at %s is not an executable; Debian package %s: %s", name, path, pkg, setupHint)
	}
	return path, nil
}

func toolVersion(path string) (string, error) {
	cmd := exec.Command(path, "--version")
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first, nil
}

// reservedMounts are the sandbox's own root; a bind onto one would replace it.
var reservedMounts = []string{"/usr", "/etc", "/proc", "/dev", "/tmp", "/bin", "/lib", "/lib64", "/sbin", "/sys"}

// check refuses a Spec that would weaken the sandbox or cannot work.
func (r *Runner) check(s *Spec) error {
	if len(s.Argv) == 0 {
		return errors.New("sandbox: empty Argv")
	}
	if s.UID == 0 || s.GID == 0 {
		return fmt.Errorf("sandbox: refusing uid %d gid %d: repository code never runs as root", s.UID, s.GID)
	}
	if euid := os.Geteuid(); euid != 0 && s.UID != uint32(euid) {
		return fmt.Errorf("sandbox: a worker running as uid %d can only sandbox as itself, not uid %d", euid, s.UID)
	}
	if r.off {
		if !filepath.IsAbs(s.Dir) {
			return fmt.Errorf("sandbox: Dir %q is not absolute", s.Dir)
		}
		return nil
	}
	if s.Net != NetNone && s.Net != NetEgress {
		return fmt.Errorf("sandbox: unknown network %v", s.Net)
	}
	if s.Net == NetEgress && r.slirpErr != nil {
		return r.slirpErr
	}
	if s.Limits.Memory < 0 || s.Limits.Pids < 0 || s.Limits.Wall < 0 {
		return fmt.Errorf("sandbox: negative limits %+v", s.Limits)
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("sandbox: environment entry %q is not KEY=value", kv)
		}
	}
	for _, p := range append(append([]string{}, s.Writable...), s.ReadOnly...) {
		if err := checkBind(p); err != nil {
			return err
		}
	}
	if s.Dir == "" {
		return errors.New("sandbox: empty Dir")
	}
	if !filepath.IsAbs(s.Dir) {
		return fmt.Errorf("sandbox: Dir %q is not absolute", s.Dir)
	}
	dir := filepath.Clean(s.Dir)
	if dir != "/" && dir != "/tmp" && !inside(dir, s.Writable) && !inside(dir, s.ReadOnly) {
		return fmt.Errorf("sandbox: Dir %s is not inside a Writable or ReadOnly bind", dir)
	}
	return nil
}

// checkBind refuses relative, root, reserved, missing and symlinked paths: the
// bind must name exactly the host directory the caller meant.
func checkBind(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("sandbox: bind %q is not an absolute path", p)
	}
	c := filepath.Clean(p)
	if c == "/" {
		return errors.New("sandbox: refusing to bind / (the whole host)")
	}
	for _, m := range reservedMounts {
		if c == m || (m != "/usr" && m != "/etc" && m != "/tmp" && strings.HasPrefix(c, m+"/")) {
			return fmt.Errorf("sandbox: refusing bind %s: it would replace the sandbox's own %s", c, m)
		}
	}
	if _, err := os.Stat(c); err != nil {
		return fmt.Errorf("sandbox: bind %s: %w", c, err)
	}
	real, err := filepath.EvalSymlinks(c)
	if err != nil {
		return fmt.Errorf("sandbox: bind %s: %w", c, err)
	}
	if real != c {
		return fmt.Errorf("sandbox: bind %s goes through a symlink (to %s); name the real path", c, real)
	}
	return nil
}

func inside(p string, roots []string) bool {
	for _, r := range roots {
		r = filepath.Clean(r)
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}
