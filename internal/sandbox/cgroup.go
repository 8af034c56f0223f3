package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroups is where per-Process cgroups are made. Under cgroup v1 the signoff/
// parent sits inside the worker's own memory and pids cgroups, so whatever bounds
// the worker (a systemd unit, a container) still bounds its sandboxes. Under v2 the
// no-internal-processes rule forbids that, so the parent is <root>/signoff.
type cgroups struct {
	v2      bool
	parents []string // v1: memory then pids parent; v2: the one parent
	memsw   bool     // v1 accounts swap, so the limit covers it
}

func openCgroups(root string) (*cgroups, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		parent := filepath.Join(root, "signoff")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v2 at %s: %w", root, err)
		}
		for _, dir := range []string{root, parent} {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0); err != nil {
				return nil, fmt.Errorf("cgroup v2: enabling memory and pids in %s: %w", dir, err)
			}
		}
		return &cgroups{v2: true, parents: []string{parent}}, nil
	}
	own, err := ownCgroupsV1()
	if err != nil {
		return nil, err
	}
	c := &cgroups{}
	for _, ctrl := range []string{"memory", "pids"} {
		rel, ok := own[ctrl]
		if !ok {
			return nil, fmt.Errorf("cgroup v1: no %s controller in /proc/self/cgroup", ctrl)
		}
		parent := filepath.Join(root, ctrl, rel, "signoff")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v1 %s: %w", ctrl, err)
		}
		c.parents = append(c.parents, parent)
	}
	_, err = os.Stat(filepath.Join(c.parents[0], "memory.memsw.limit_in_bytes"))
	c.memsw = err == nil
	return c, nil
}

// ownCgroupsV1 maps each v1 controller to the worker's cgroup path in it.
func ownCgroupsV1() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	own := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			own[ctrl] = parts[2]
		}
	}
	return own, sc.Err()
}

// describe names the mechanism, never the worker's own cgroup paths: the line ends up in
// signed build records and on proof pages.
func (c *cgroups) describe() string {
	if c.v2 {
		return "cgroup v2 (swap off)"
	}
	swap := "swap not accounted, swappiness 0"
	if c.memsw {
		swap = "swap included"
	}
	return fmt.Sprintf("cgroup v1 (%s)", swap)
}

// cgroup is one Process's: a directory per hierarchy.
type cgroup struct {
	dirs []string
}

func (c *cgroups) create(l Limits) (*cgroup, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	name := "sbx-" + hex.EncodeToString(b[:])
	g := &cgroup{}
	for _, p := range c.parents {
		d := filepath.Join(p, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			g.destroy()
			return nil, fmt.Errorf("sandbox: creating cgroup: %w", err)
		}
		g.dirs = append(g.dirs, d)
	}
	mem := strconv.FormatInt(l.Memory, 10)
	var writes [][2]string
	if c.v2 {
		d := g.dirs[0]
		writes = [][2]string{{d + "/memory.max", mem}, {d + "/memory.swap.max", "0"}, {d + "/pids.max", strconv.Itoa(l.Pids)}}
	} else {
		m, p := g.dirs[0], g.dirs[1]
		writes = [][2]string{{m + "/memory.limit_in_bytes", mem}, {m + "/memory.swappiness", "0"}}
		if c.memsw {
			writes = append(writes, [2]string{m + "/memory.memsw.limit_in_bytes", mem})
		}
		writes = append(writes, [2]string{p + "/pids.max", strconv.Itoa(l.Pids)})
	}
	for _, w := range writes {
		if err := os.WriteFile(w[0], []byte(w[1]), 0); err != nil {
			g.destroy()
			return nil, fmt.Errorf("sandbox: setting cgroup limit %s: %w", filepath.Base(w[0]), err)
		}
	}
	return g, nil
}

// add moves pid into every hierarchy of the cgroup.
func (g *cgroup) add(pid int) error {
	for _, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("sandbox: moving pid %d into %s: %w", pid, d, err)
		}
	}
	return nil
}

// destroy kills anything still in the cgroup and removes it. By the time Wait calls
// it the pid namespace is gone, so the kills are a second line, not the mechanism.
func (g *cgroup) destroy() error {
	var errs []error
	for _, d := range g.dirs {
		deadline := time.Now().Add(5 * time.Second)
		for delay := time.Millisecond; ; delay *= 2 {
			killAll(d)
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("sandbox: removing cgroup %s: %w", d, err))
				break
			}
			time.Sleep(min(delay, 100*time.Millisecond))
		}
	}
	return errors.Join(errs...)
}

func killAll(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
