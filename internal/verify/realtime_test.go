package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHostLoadStretch(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "loadavg")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		file string
		cpus int
		want float64
	}{
		{"0.50 0.40 0.30 1/200 999\n", 2, 1},    // idle: the configured factor as it is
		{"6.00 5.00 4.00 7/300 999\n", 2, 3},    // three runnable tasks per CPU
		{"12.00 9.00 8.00 9/300 999\n", 2, 6},   // six per CPU: a host running builds beside the browser
		{"62.00 40.00 30.00 9/300 999\n", 2, 8}, // capped: a spinning page still ends
		{"garbage", 2, 1},
		{"NaN 1 1", 2, 1},
		{"", 2, 1},
		{"3.0 1 1", 0, 1},
	} {
		if got := hostLoadStretch(write(tc.file), tc.cpus); got != tc.want {
			t.Errorf("hostLoadStretch(%q, %d) = %v, want %v", tc.file, tc.cpus, got, tc.want)
		}
	}
	if got := hostLoadStretch(filepath.Join(dir, "missing"), 2); got != 1 {
		t.Errorf("no loadavg file: %v, want 1", got)
	}
}

func TestRealDeadlineScalesWithFactorAndViewports(t *testing.T) {
	start := time.Unix(1000, 0)
	c := Config{RealTimeFactor: 3}
	end, f := c.realDeadline(start, 10*time.Second, 2)
	if f < 3 || f > 3*maxLoadStretch {
		t.Fatalf("factor %v outside [3, %v]", f, 3*maxLoadStretch)
	}
	if want := start.Add(time.Duration(float64(20*time.Second) * f)); !end.Equal(want) {
		t.Fatalf("deadline %v, want %v", end, want)
	}
	if _, f := (Config{}).realDeadline(start, time.Second, 0); f < DefaultRealTimeFactor {
		t.Fatalf("zero config factor %v, want at least the default %v", f, DefaultRealTimeFactor)
	}
}

func TestRealTimeFactorFromEnvironment(t *testing.T) {
	t.Setenv(EnvRealTimeFactor, "5")
	if c := DefaultConfig(); c.RealTimeFactor != 5 || c.problem != "" {
		t.Fatalf("5: %+v", c)
	}
	for _, bad := range []string{"fast", "0.5", "100", "-2"} {
		t.Setenv(EnvRealTimeFactor, bad)
		c := DefaultConfig()
		err := c.CheckSetup(false)
		if err == nil || !strings.Contains(err.Error(), EnvRealTimeFactor) {
			t.Fatalf("%q: CheckSetup = %v, want an error naming %s", bad, err, EnvRealTimeFactor)
		}
	}
}
