// Package progress prints a contract's timeline as it grows: a line per phase with the
// elapsed time, a spinner on a terminal, JSON lines for machines.
package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workflows"
)

// Printer follows status snapshots and prints what is new since the last one.
type Printer struct {
	Out   io.Writer
	TTY   bool
	JSON  bool
	Start time.Time

	mu      sync.Mutex
	seen    int
	spinner int
	phase   string
}

var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Update prints the events added since the previous snapshot.
func (p *Printer) Update(st workflows.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Start.IsZero() {
		p.Start = time.Now()
	}
	elapsed := time.Since(p.Start)
	if p.TTY && !p.JSON {
		fmt.Fprint(p.Out, "\r\033[K") // clear the spinner line
	}
	for _, ev := range st.Timeline[min(p.seen, len(st.Timeline)):] {
		if p.JSON {
			b, _ := json.Marshal(map[string]any{"elapsed_s": elapsed.Seconds(), "event": ev.Type, "data": ev.Data, "state": st.State})
			fmt.Fprintln(p.Out, string(b))
			continue
		}
		if line := Describe(ev); line != "" {
			fmt.Fprintf(p.Out, "[%6.1fs] %s\n", elapsed.Seconds(), line)
		}
	}
	p.seen = max(p.seen, len(st.Timeline))
	p.phase = st.Phase
	if p.TTY && !p.JSON && !st.Final {
		p.spinner = (p.spinner + 1) % len(frames)
		fmt.Fprintf(p.Out, "%s %s: %s", frames[p.spinner], st.State, st.Phase)
	}
}

// Describe turns a timeline event into a short line; "" hides bookkeeping events.
func Describe(ev contracts.Event) string {
	d := ev.Data
	switch ev.Type {
	case "quoted":
		return fmt.Sprintf("quoted: contract hash %s", short(d["hash"]))
	case "discrimination":
		return fmt.Sprintf("on the base commit: failing %s; already passing %s", orNone(d["failing_on_base"]), orNone(d["regression_guards"]))
	case "approval_refused":
		return "approval refused: " + d["why"]
	case "approved":
		return fmt.Sprintf("approved by %s (hash %s)", d["approver"], short(d["hash"]))
	case "payment_requested":
		label := ""
		if d["local"] == "true" {
			label = " (local: no money moves)"
		}
		return fmt.Sprintf("checkout opened with %s%s", d["provider"], label)
	case "payment_authorized":
		return "payment authorized (captured only if satisfied)"
	case "lock_acquired":
		return "repository locked for this contract"
	case "attempt_started":
		return fmt.Sprintf("attempt %s: executor working", d["attempt"])
	case "executed":
		if d["empty"] == "true" {
			return fmt.Sprintf("attempt %s: the executor changed nothing", d["attempt"])
		}
		return fmt.Sprintf("attempt %s: committed %s (%s)", d["attempt"], short(d["commit"]), d["diff"])
	case "published":
		return fmt.Sprintf("pushed %s to %s", short(d["commit"]), d["branch"])
	case "preview_built":
		if d["build_passed"] == "true" {
			return fmt.Sprintf("attempt %s: build passed, preview up", d["attempt"])
		}
		return fmt.Sprintf("attempt %s: build failed", d["attempt"])
	case "verifying":
		return fmt.Sprintf("attempt %s: verifying in a real browser (try %s)", d["attempt"], orOne(d["try"]))
	case "verdict":
		return fmt.Sprintf("attempt %s: %s — %s", d["attempt"], strings.ToUpper(d["verdict"]), strings.TrimPrefix(d["summary"], d["verdict"]+": "))
	case "reverify":
		return fmt.Sprintf("attempt %s: re-verifying the same commit (no code change)", d["attempt"])
	case "paused_for_operator":
		return "paused: an operator must retry verification or abandon"
	case "retry_verification":
		return "operator asked to retry verification"
	case "abandoned":
		return "operator abandoned: " + d["reason"]
	case "payment_captured":
		return "payment captured"
	case "payment_cancelled":
		return "authorization cancelled: no payment taken (" + d["reason"] + ")"
	case "capture_refused":
		return "capture refused by the provider: " + d["error"]
	case "merge_eligible":
		return fmt.Sprintf("PR merge-eligible at %s", short(d["head"]))
	case "merge_eligibility_revoked":
		return "merge eligibility revoked: " + d["why"]
	case "cancelled":
		return "cancelled"
	case "quote_expired":
		return "quote expired"
	}
	if strings.HasSuffix(ev.Type, "_error") {
		return ev.Type + ": " + d["error"]
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orOne(s string) string {
	if s == "" {
		return "1"
	}
	return s
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
