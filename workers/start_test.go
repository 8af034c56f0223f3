package workers_test

import (
	"testing"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workers"
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
	if err := basecheck.Ready(temporaltest.Context(t), c); err != nil {
		t.Errorf("right after Start: %v", err)
	}
}
