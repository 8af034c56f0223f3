// Package hostload reads how busy the host is, for the verifier's real-time budget and for
// tests that must run on a busy host.
package hostload

import (
	"os"
	"strconv"
	"strings"
)

// Path is where Linux publishes the host's load averages.
const Path = "/proc/loadavg"

// OneMinute is the one-minute load average in the loadavg file at path. ok is false when the
// file is missing (not Linux) or unreadable.
func OneMinute(path string) (load float64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, false
	}
	load, err = strconv.ParseFloat(fields[0], 64)
	if err != nil || load != load { // NaN
		return 0, false
	}
	return load, true
}
