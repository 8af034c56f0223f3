package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// etcFiles is the whole /etc the sandbox sees: name lookup, TLS roots, the dynamic
// loader, time zone, and Debian's alternatives (npm, node and editors resolve
// through them). Nothing with secrets: no shadow, no ssl/private, no npmrc or gitconfig.
var etcFiles = []string{
	"passwd", "group", "hosts", "nsswitch.conf", "host.conf", "gai.conf",
	"services", "protocols", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"localtime", "timezone", "alternatives", "ssl/certs", "ssl/openssl.cnf",
	"ca-certificates", "ca-certificates.conf", "os-release", "debian_version", "mime.types",
}

// rootLinks are the usrmerge top-level directories; each is copied as the host has
// it: a symlink into /usr (Debian bookworm) or a read-only bind.
var rootLinks = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// resolvConf points at slirp4netns's DNS forwarder; under NetNone it resolves nothing.
const resolvConf = "nameserver 10.0.2.3\n"

// Child-side descriptors bwrap is started with (os/exec ExtraFiles start at 3).
const (
	fdArgs   = 3
	fdInfo   = 4
	fdBlock  = 5
	fdResolv = 6
)

// bwrapArgs is the whole sandbox but the command, handed to bwrap through --args so
// that neither the environment nor the binds show up in a host-wide readable cmdline.
// (bwrap takes the command only from its real argv.)
func bwrapArgs(s Spec) []string {
	a := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--hostname", "sandbox", "--clearenv",
	}
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	a = append(a, "--ro-bind", "/usr", "/usr")
	for _, n := range rootLinks {
		host := "/" + n
		fi, err := os.Lstat(host)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(host); err == nil {
				a = append(a, "--symlink", target, host)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", host, host)
		}
	}
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", "/etc/"+f, "/etc/"+f)
	}
	a = append(a,
		"--ro-bind-data", strconv.Itoa(fdResolv), "/etc/resolv.conf",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
	)
	type bind struct {
		path string
		rw   bool
	}
	var binds []bind
	for _, p := range s.ReadOnly {
		binds = append(binds, bind{filepath.Clean(p), false})
	}
	for _, p := range s.Writable {
		binds = append(binds, bind{filepath.Clean(p), true})
	}
	// Shallowest first: a deeper bind is mounted over the one that contains it.
	sort.SliceStable(binds, func(i, j int) bool {
		return strings.Count(binds[i].path, "/") < strings.Count(binds[j].path, "/")
	})
	for _, b := range binds {
		flag := "--ro-bind"
		if b.rw {
			flag = "--bind"
		}
		a = append(a, flag, b.path, b.path)
	}
	a = append(a,
		// bwrap's root is a writable tmpfs holding the mount points; freeze it.
		"--remount-ro", "/",
		"--chdir", filepath.Clean(s.Dir),
		"--info-fd", strconv.Itoa(fdInfo),
		"--block-fd", strconv.Itoa(fdBlock),
	)
	return a
}
