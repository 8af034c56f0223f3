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
	"github.com/signoff/signoff/workflows/contractapi"
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
func (p *Printer) Update(st contractapi.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Start.IsZero() {
		// Watching a contract that began before us: time counts from its first event.
		p.Start = time.Now()
		if len(st.Timeline) > 0 {
			if at, err := time.Parse(time.RFC3339Nano, st.Timeline[0].At); err == nil && at.Before(p.Start) {
				p.Start = at
			}
		}
	}
	now := time.Since(p.Start)
	if p.TTY && !p.JSON {
		fmt.Fprint(p.Out, "\r\033[K") // clear the spinner line
	}
	for _, ev := range st.Timeline[min(p.seen, len(st.Timeline)):] {
		// Each event at its own time (a past event is not "now"), never before the start.
		elapsed := now
		if at, err := time.Parse(time.RFC3339Nano, ev.At); err == nil {
			elapsed = max(at.Sub(p.Start), 0)
		}
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
	case contracts.EventQuoted:
		return fmt.Sprintf("quoted: contract hash %s", contracts.ShortSHA(d[contracts.DataHash]))
	case contracts.EventBaseCheck:
		return fmt.Sprintf("on the base commit: failing %s; already passing %s", orNone(d[contracts.DataFailingOnBase]), orNone(d[contracts.DataRegressionGuards]))
	case contracts.EventApprovalRefused:
		return "approval refused: " + d[contracts.DataWhy]
	case contracts.EventApproved:
		return fmt.Sprintf("approved by %s (hash %s)", d[contracts.DataApprover], contracts.ShortSHA(d[contracts.DataHash]))
	case contracts.EventPaymentRequested:
		label := ""
		if d[contracts.DataLocal] == "true" {
			label = " (local: no money moves)"
		}
		return fmt.Sprintf("checkout opened with %s%s", d[contracts.DataProvider], label)
	case contracts.EventPaymentAuthorized:
		return "payment authorized (captured only if satisfied)"
	case contracts.EventLockAcquired:
		return "repository locked for this contract"
	case contracts.EventAttemptStarted:
		return fmt.Sprintf("attempt %s: executor working", d[contracts.DataAttempt])
	case contracts.EventExecuted:
		if d[contracts.DataEmpty] == "true" {
			return fmt.Sprintf("attempt %s: the executor changed nothing", d[contracts.DataAttempt])
		}
		return fmt.Sprintf("attempt %s: committed %s (%s)", d[contracts.DataAttempt], contracts.ShortSHA(d[contracts.DataCommit]), d[contracts.DataDiff])
	case contracts.EventPublished:
		return fmt.Sprintf("pushed %s to %s", contracts.ShortSHA(d[contracts.DataCommit]), d[contracts.DataBranch])
	case contracts.EventPreviewBuilt:
		if d[contracts.DataBuildPassed] == "true" {
			return fmt.Sprintf("attempt %s: build passed, preview up", d[contracts.DataAttempt])
		}
		return fmt.Sprintf("attempt %s: build failed", d[contracts.DataAttempt])
	case contracts.EventVerifying:
		return fmt.Sprintf("attempt %s: verifying in a real browser (try %s)", d[contracts.DataAttempt], orOne(d[contracts.DataTry]))
	case contracts.EventVerdict:
		return fmt.Sprintf("attempt %s: %s — %s", d[contracts.DataAttempt], strings.ToUpper(d[contracts.DataVerdict]), strings.TrimPrefix(d[contracts.DataSummary], d[contracts.DataVerdict]+": "))
	case contracts.EventReverify:
		return fmt.Sprintf("attempt %s: re-verifying the same commit (no code change)", d[contracts.DataAttempt])
	case contracts.EventPausedForOperator:
		return "paused: an operator must retry verification or abandon"
	case contracts.EventRetryVerification:
		return "operator asked to retry verification"
	case contracts.EventAbandoned:
		return "operator abandoned: " + d[contracts.DataReason]
	case contracts.EventPaymentCaptured:
		return "payment captured"
	case contracts.EventPaymentCancelled:
		return "authorization cancelled: no payment taken (" + d[contracts.DataReason] + ")"
	case contracts.EventCaptureRefused:
		return "capture refused by the provider: " + d[contracts.DataError]
	case contracts.EventMergeEligible:
		return fmt.Sprintf("PR merge-eligible at %s", contracts.ShortSHA(d[contracts.DataHead]))
	case contracts.EventMergeEligibilityRevoked:
		return "merge eligibility revoked: " + d[contracts.DataWhy]
	case contracts.EventCancelled:
		return "cancelled"
	case contracts.EventQuoteExpired:
		return "quote expired"
	}
	if contracts.IsErrorEvent(ev.Type) {
		return ev.Type + ": " + d[contracts.DataError]
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
