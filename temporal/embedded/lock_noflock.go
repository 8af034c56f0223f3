//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package embedded

import (
	"fmt"
	"runtime"
)

type dirLock struct{}

func lockDataDir(string) (*dirLock, error) {
	return nil, fmt.Errorf("temporal: the embedded server needs flock, which %s lacks; use --temporal-address", runtime.GOOS)
}

func (*dirLock) release() error { return nil }
