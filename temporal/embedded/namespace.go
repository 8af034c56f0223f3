package embedded

import (
	"context"
	"fmt"

	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/signoff/signoff/temporal"
)

// ensureRetention applies the configured retention to a namespace that already
// existed with another value (pre-registration never overwrites). Proofs point at
// histories in the Web UI, so they are kept for days, not the server's 24 h default,
// and a changed flag must take effect on the next start.
func ensureRetention(ctx context.Context, dc temporal.DialConfig, days int) error {
	opts, err := temporal.ClientOptions(dc)
	if err != nil {
		return err
	}
	nc, err := client.NewNamespaceClient(opts)
	if err != nil {
		return fmt.Errorf("temporal: namespace client: %w", err)
	}
	defer nc.Close()

	want := retention(days)
	desc, err := nc.Describe(ctx, dc.Namespace)
	if err != nil {
		return fmt.Errorf("temporal: describe namespace %q: %w", dc.Namespace, err)
	}
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() == want {
		return nil
	}
	err = nc.Update(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: dc.Namespace,
		Config:    &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(want)},
	})
	if err != nil {
		return fmt.Errorf("temporal: set retention of namespace %q to %d days: %w", dc.Namespace, days, err)
	}
	return nil
}
