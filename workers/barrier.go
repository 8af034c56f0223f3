package workers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// EnvBarrier, set to DIR:POINT in a worker's environment, stops that worker at one point of
// one activity until the file DIR/<point>.release exists. Tests use it to SIGKILL a worker at
// an exact moment; production never sets it, and no activity knows of it.
//
// POINT is "<Activity>:start" (before the activity's body runs) or "<Activity>:applied"
// (after the body succeeded, before its result reaches the server). On reaching it the
// worker writes DIR/<point>.reached holding its pid; ":" in a point is "_" in file names.
const EnvBarrier = "SIGNOFF_TEST_BARRIER"

// NewBarrier returns the interceptors a DIR:POINT spec (settings' TestBarrier, from
// EnvBarrier) asks for: none when it is empty.
func NewBarrier(v string) ([]interceptor.WorkerInterceptor, error) {
	if v == "" {
		return nil, nil
	}
	dir, point, ok := strings.Cut(v, ":")
	if !ok || dir == "" || !strings.Contains(point, ":") {
		return nil, fmt.Errorf("%s=%q: want DIR:<Activity>:start or DIR:<Activity>:applied", EnvBarrier, v)
	}
	return []interceptor.WorkerInterceptor{&barrier{dir: dir, point: point}}, nil
}

type barrier struct {
	interceptor.WorkerInterceptorBase
	dir, point string
}

func (b *barrier) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &barrierActivity{b: b}
	i.Next = next
	return i
}

type barrierActivity struct {
	interceptor.ActivityInboundInterceptorBase
	b *barrier
}

func (i *barrierActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	name := activity.GetInfo(ctx).ActivityType.Name
	i.b.at(name + ":start")
	res, err := i.Next.ExecuteActivity(ctx, in)
	if err == nil {
		i.b.at(name + ":applied")
	}
	return res, err
}

// at holds the worker at point when it is the barrier's point.
func (b *barrier) at(point string) {
	if point != b.point {
		return
	}
	name := strings.ReplaceAll(point, ":", "_")
	_ = os.WriteFile(filepath.Join(b.dir, name+".reached"), []byte(fmt.Sprint(os.Getpid())), 0o644)
	for {
		if _, err := os.Stat(filepath.Join(b.dir, name+".release")); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond) // waiting for a file another process (the test) writes
	}
}
