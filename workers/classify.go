package workers

import (
	"context"
	"errors"
	"strings"

	"github.com/signoff/signoff/activities"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// The SDK reads an activity error's type and retryability only from the error itself, not
// from an application error it wraps: fmt.Errorf("preview: %w", capability.Refused(err)) is
// retried as a generic failure, and a hostile page the verifier refused is verified again.
// classification brings a wrapped application error's type and retryability to the top for
// every activity of the worker, whatever wraps it.

// classification is installed on every worker before the caller's interceptors.
type classification struct {
	interceptor.WorkerInterceptorBase
}

func (*classification) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &classifiedActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type classifiedActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *classifiedActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	return res, Classified(err)
}

// Classified returns err with the type and retryability of the first application error it
// wraps at its top, with the wrappers' context; a capability's classified error becomes its
// application error first (activities.ApplicationError); any other error is returned as it is.
func Classified(err error) error {
	err = activities.ApplicationError(err)
	var app *temporal.ApplicationError
	if err == nil || !errors.As(err, &app) {
		return err
	}
	if top, ok := err.(*temporal.ApplicationError); ok && top == app {
		return err
	}
	// The wrappers' context, then the application error's own message and cause once.
	msg := strings.TrimSuffix(err.Error(), app.Error()) + app.Message()
	return temporal.NewApplicationErrorWithOptions(msg, app.Type(), temporal.ApplicationErrorOptions{NonRetryable: app.NonRetryable(), Cause: errors.Unwrap(app)})
}

// withClassification puts classification before the given interceptors.
func withClassification(is []interceptor.WorkerInterceptor) []interceptor.WorkerInterceptor {
	return append([]interceptor.WorkerInterceptor{&classification{}}, is...)
}

// WorkerOptions are the options of a worker outside a Set (the chat queue's).
func WorkerOptions() worker.Options {
	return worker.Options{Interceptors: withClassification(nil)}
}
