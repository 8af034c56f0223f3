package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// budgetMS is the time left before the deadline in milliseconds, capped by capMS when > 0.
func budgetMS(deadline time.Time, capMS int) (float64, error) {
	left := time.Until(deadline)
	if left <= 0 {
		return 0, errDeadline
	}
	ms := float64(left.Milliseconds())
	if ms < 1 {
		ms = 1
	}
	if capMS > 0 && float64(capMS) < ms {
		ms = float64(capMS)
	}
	return ms, nil
}

// classify marks an error that happened because the criterion's budget ran out. A Playwright
// timeout given the remaining budget can fire a little before the deadline by Go's clock, hence
// the slack.
func classify(err error, deadline time.Time) error {
	const slack = 250 * time.Millisecond
	if err == nil || errors.Is(err, errDeadline) {
		return err
	}
	left := time.Until(deadline)
	if left <= 0 || (left < slack && errors.Is(err, playwright.ErrTimeout)) {
		return fmt.Errorf("%w: %w", errDeadline, err)
	}
	return err
}

// guard runs fn but gives up at the deadline or on cancellation: CDP calls and evaluations
// have no timeout of their own, and a page stuck in a loop would otherwise hang the run. The
// abandoned call ends when its browser context closes.
func guard(ctx context.Context, deadline time.Time, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errDeadline
	case <-ctx.Done():
		return ctx.Err()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errDeadline means the criterion's max_runtime_ms ran out.
var errDeadline = errors.New("max_runtime_ms exceeded")
