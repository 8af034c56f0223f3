//go:build !linux

package localstripe

import "os/exec"

// setChildAttrs has no parent-death signal outside Linux; Close still stops the child.
func setChildAttrs(cmd *exec.Cmd) {}
