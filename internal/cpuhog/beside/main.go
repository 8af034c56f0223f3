// Command beside runs a command beside CPU hogs, each an internal/cpuhog keeping every CPU
// busy, and stops them when the command ends, whatever its exit status: the test suite on a
// machine others are using (`go tool task test:loaded`).
//
//	beside [-hogs N] -- command [args...]
//
// It exits with the command's status (128+signal when a signal ended it). SIGINT, SIGTERM and
// SIGHUP are passed to the command, which decides when to end; the hogs are goroutines of
// this process, so nothing of them outlives it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/signoff/signoff/internal/cpuhog"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("beside", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hogs := fs.Int("hogs", 2, "how many CPU hogs (each keeps every CPU busy)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 || *hogs < 0 {
		fmt.Fprintln(stderr, "usage: beside [-hogs N] -- command [args...]")
		return 2
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	var stops []func()
	for range *hogs {
		stops = append(stops, cpuhog.Start())
	}
	begin := time.Now()
	stopHogs := func() {
		for _, stop := range stops {
			stop()
		}
	}
	fmt.Fprintf(stderr, "beside: %d CPU hog(s) started (each keeps all %d CPUs busy), pid %d\n", *hogs, runtime.NumCPU(), os.Getpid())
	if err := cmd.Start(); err != nil {
		stopHogs()
		fmt.Fprintf(stderr, "beside: %v; CPU hogs stopped\n", err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	stopHogs()
	code := 0
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		code = 1
	}
	fmt.Fprintf(stderr, "beside: CPU hogs stopped after %s; %s exited %d\n", time.Since(begin).Round(time.Second), fs.Arg(0), code)
	return code
}
