package localstripe

import (
	"os/exec"
	"syscall"
)

// setChildAttrs asks the kernel to end stripe-mock if Signoff dies without stopping it, so a
// crashed `signoff dev` leaves no orphan listening on loopback.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
