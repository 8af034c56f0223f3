package sandbox

// Hostile probes: the test binary re-executes itself inside the sandbox with
// SANDBOX_PROBE naming the probe, and the probe reports on stdout. Each is real code
// trying something a prompt-injected agent would.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const probeEnv = "SANDBOX_PROBE"

var probes = map[string]func(args []string) int{
	"env":         probeEnviron,
	"daemon":      probeDaemon,
	"daemon-mid":  probeDaemonMid,
	"daemon-leaf": probeDaemonLeaf,
	"dial":        probeDial,
	"fs":          probeFS,
	"proc":        probeProc,
	"echo":        probeEcho,
	"signal":      probeSignal,
	"fork":        probeFork,
	"alloc":       probeAlloc,
	"serve":       probeServe,
	"exec":        probeExec,
	"fill":        probeFill,
}

// runProbe is TestMain's branch for a process started inside a sandbox.
func runProbe(name string) int {
	f, ok := probes[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown probe %q\n", name)
		return 100
	}
	return f(os.Args[1:])
}

// probeEnviron prints the environment as JSON, then the status lines that matter,
// then creates the file named by args[0].
func probeEnviron(args []string) int {
	b, _ := json.Marshal(os.Environ())
	fmt.Println(string(b))
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println("status:", err)
		return 1
	}
	for _, l := range strings.Split(string(status), "\n") {
		for _, k := range []string{"Uid:", "Gid:", "Groups:", "NoNewPrivs:", "CapEff:", "CapPrm:", "CapBnd:", "CapAmb:"} {
			if strings.HasPrefix(l, k) {
				fmt.Println(strings.Join(strings.Fields(l), " "))
			}
		}
	}
	if err := os.WriteFile(args[0], []byte("x"), 0o644); err != nil {
		fmt.Println("create:", err)
		return 1
	}
	return 0
}

// probeDaemon detaches a grandchild the classic way (setsid, then a second fork whose
// parent exits), waits until it runs, says "ready", and exits when stdin closes.
func probeDaemon([]string) int {
	r, w, err := os.Pipe()
	if err != nil {
		return 1
	}
	mid := exec.Command("/proc/self/exe")
	mid.Env = append(os.Environ(), probeEnv+"=daemon-mid")
	mid.ExtraFiles = []*os.File{w}
	mid.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := mid.Run(); err != nil {
		fmt.Println("mid:", err)
		return 1
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		fmt.Println("leaf:", err)
		return 1
	}
	fmt.Print("ready ", line)
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	return 0
}

func probeDaemonMid([]string) int {
	leaf := exec.Command("/proc/self/exe")
	leaf.Env = append(os.Environ(), probeEnv+"=daemon-leaf")
	leaf.ExtraFiles = []*os.File{os.NewFile(3, "report")}
	leaf.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := leaf.Start(); err != nil {
		return 1
	}
	return 0 // the leaf is orphaned, reparented to the namespace's init
}

func probeDaemonLeaf([]string) int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	report := os.NewFile(3, "report")
	fmt.Fprintf(report, "%d\n", os.Getpid())
	report.Close()
	time.Sleep(time.Hour)
	return 0
}

// probeDial tries each address and prints "addr ok" or "addr fail: err".
func probeDial(args []string) int {
	for _, a := range args {
		c, err := net.DialTimeout("tcp", a, 3*time.Second)
		if err != nil {
			fmt.Printf("%s fail: %v\n", a, err)
			continue
		}
		c.Close()
		fmt.Printf("%s ok\n", a)
	}
	return 0
}

// probeFS runs "read:PATH", "write:PATH", "append:PATH", "ls:PATH" and prints
// "op:PATH ok" or "op:PATH fail: err" for each.
func probeFS(args []string) int {
	for _, a := range args {
		op, path, _ := strings.Cut(a, ":")
		var err error
		switch op {
		case "read":
			_, err = os.ReadFile(path)
		case "write":
			err = os.WriteFile(path, []byte("pwned"), 0o644)
		case "append":
			var f *os.File
			if f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, err = f.WriteString("pwned")
				f.Close()
			}
		case "ls":
			_, err = os.ReadDir(path)
		default:
			err = fmt.Errorf("unknown op %q", op)
		}
		if err != nil {
			fmt.Printf("%s fail: %v\n", a, err)
		} else {
			fmt.Printf("%s ok\n", a)
		}
	}
	return 0
}

// probeProc prints "pid comm" for every process /proc shows.
func probeProc([]string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		fmt.Println("ls /proc:", err)
		return 1
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		fmt.Println(e.Name(), strings.TrimSpace(string(comm)))
	}
	fmt.Println("self", os.Getpid())
	return 0
}

// probeEcho says "ready" and echoes stdin lines until EOF: a live sandbox to attack.
func probeEcho([]string) int {
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println("echo", sc.Text())
	}
	return 0
}

// probeSignal sends signal 0 to each pid in args, then SIGKILL to every process it
// can (kill -1), and reports.
func probeSignal(args []string) int {
	for _, a := range args {
		pid, _ := strconv.Atoi(a)
		fmt.Printf("kill %d: %v\n", pid, syscall.Kill(pid, 0))
	}
	fmt.Printf("kill -1: %v\n", syscall.Kill(-1, syscall.SIGKILL))
	return 0
}

// probeFork starts sleepers until the kernel refuses; prints how many and why.
func probeFork([]string) int {
	n := 0
	for ; n < 500; n++ {
		_, err := syscall.ForkExec("/usr/bin/sleep", []string{"sleep", "600"}, &syscall.ProcAttr{})
		if err != nil {
			fmt.Printf("started %d, then: %v\n", n, err)
			return 0
		}
	}
	fmt.Printf("started %d, never refused\n", n)
	return 0
}

// probeAlloc touches args[0] MiB of memory, then prints "allocated".
func probeAlloc(args []string) int {
	mib, _ := strconv.Atoi(args[0])
	var keep [][]byte
	for i := 0; i < mib; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		keep = append(keep, b)
	}
	fmt.Println("allocated", len(keep))
	return 0
}

// probeServe serves HTTP on each listen address in args, prints "port N" for each,
// "ready", and serves until stdin closes. Every answer is SANDBOX_TOKEN.
func probeServe(args []string) int {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getenv("SANDBOX_TOKEN"))
	})
	for _, a := range args {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		fmt.Println("port", ln.Addr().(*net.TCPAddr).Port)
		go func() { _ = http.Serve(ln, h) }()
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	return 0
}

// probeExec runs args and prints its combined output.
func probeExec(args []string) int {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	fmt.Print(string(out))
	if err != nil {
		fmt.Println("exec:", err)
	}
	return 0
}

// probeFill fills the folder args[0] ("bytes": one file up to 1 GiB, "files": empty files up
// to a million), says how far it got, and then holds on, as a job that keeps what it wrote.
func probeFill(args []string) int {
	dir, what := args[0], args[1]
	switch what {
	case "bytes":
		f, err := os.Create(dir + "/fill")
		if err != nil {
			fmt.Println("create:", err)
			return 1
		}
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = byte(i) | 1 // not zeros: nothing may turn them into holes
		}
		n := 0
		for ; n < 1024; n++ {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
		fmt.Printf("wrote %d MiB\n", n)
	case "deep":
		// A file at the bottom of folders nested past PATH_MAX, where no full path reaches.
		if err := os.Chdir(dir); err != nil {
			fmt.Println("chdir:", err)
			return 1
		}
		name := strings.Repeat("d", 200)
		for i := 0; i < 40; i++ {
			if err := os.Mkdir(name, 0o755); err != nil {
				fmt.Println("mkdir:", err)
				return 1
			}
			if err := os.Chdir(name); err != nil {
				fmt.Println("chdir:", err)
				return 1
			}
		}
		f, err := os.Create("fill")
		if err != nil {
			fmt.Println("create:", err)
			return 1
		}
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = 1
		}
		n := 0
		for ; n < 64; n++ {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
		fmt.Printf("wrote %d MiB deep\n", n)
	case "files":
		n := 0
		for ; n < 1_000_000; n++ {
			f, err := os.Create(fmt.Sprintf("%s/f%d", dir, n))
			if err != nil {
				break
			}
			f.Close()
		}
		fmt.Printf("made %d files\n", n)
	}
	select {}
}
