package main

import (
	"bytes"
	"strings"
	"testing"
)

// The command's exit status is beside's, and the hogs are reported stopped either way.
func TestRunPassesTheExitStatus(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 128 + 15}} {
		var stderr bytes.Buffer
		if got := run([]string{"-hogs", "1", "--", "/bin/sh", "-c", tc.script}, nil, &stderr, &stderr); got != tc.want {
			t.Errorf("%q: exit %d, want %d\n%s", tc.script, got, tc.want, stderr.String())
		}
		if !strings.Contains(stderr.String(), "1 CPU hog(s) started") || !strings.Contains(stderr.String(), "CPU hogs stopped") {
			t.Errorf("%q: hogs not reported started and stopped:\n%s", tc.script, stderr.String())
		}
	}
}

func TestRunRefusesNoCommand(t *testing.T) {
	var stderr bytes.Buffer
	if got := run(nil, nil, &stderr, &stderr); got != 2 {
		t.Errorf("no command: exit %d, want 2", got)
	}
	if got := run([]string{"--", "/nonexistent/command"}, nil, &stderr, &stderr); got != 127 {
		t.Errorf("missing command: exit %d, want 127\n%s", got, stderr.String())
	}
}
