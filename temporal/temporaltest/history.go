package temporaltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/signoff/signoff/internal/modroot"
)

// EnvRecordHistories, when set, has RecordHistory write the histories a test names.
const EnvRecordHistories = "SIGNOFF_RECORD_HISTORIES"

// RecordHistory writes the workflow's history to replays/<name>.json when
// SIGNOFF_RECORD_HISTORIES is set, and adds it to the checksum manifest. Recorded histories
// are append-only: an existing file is never replaced.
func RecordHistory(t testing.TB, c client.Client, id, name string) {
	t.Helper()
	if os.Getenv(EnvRecordHistories) == "" {
		return
	}
	var h historypb.History
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	root, err := modroot.FromWD()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "replays")
	path := filepath.Join(dir, name+".json")
	if _, err := os.Stat(path); err == nil {
		t.Logf("replays/%s.json exists; recorded histories are append-only, not replacing it", name)
		return
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(b, '\n'))
	f, err := os.OpenFile(filepath.Join(dir, "MANIFEST"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s  %s.json\n", hex.EncodeToString(sum[:]), name)
	t.Logf("recorded replays/%s.json", name)
}

// HistorySize is the size in bytes of the workflow's history events.
func HistorySize(t testing.TB, c client.Client, id string) int {
	t.Helper()
	n := 0
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		n += ev.Size()
	}
	return n
}
