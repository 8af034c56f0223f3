package workers_test

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Start returns only once the server lists the new workers among their queues' pollers: a
// host that says it runs a queue is then one that basecheck.Ready finds. Before, a CLI asked
// right after a control worker came up and was told that no worker polled its queue.
func TestStartReturnsOnceTheServerSeesThePollers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	stop, err := workers.Start(c, workers.Set{Control: &activities.Control{}, Execute: &activities.Execute{}, Verify: &activities.Verify{}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, q := range []struct {
		name string
		typ  enumspb.TaskQueueType
	}{
		{contractapi.ControlQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW},
		{contractapi.ExecuteQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY},
		{contractapi.VerifyQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY},
	} {
		resp, err := c.DescribeTaskQueue(temporaltest.Context(t), q.name, q.typ)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetPollers()) == 0 {
			t.Errorf("Start returned before the server listed a poller of the %s queue", q.name)
		}
	}
}
