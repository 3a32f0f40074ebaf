package check

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/nsyscheck/nsyscheck/report"
)

// The audit runs its stages beside one another (SQLite's steps and the
// records' handler, the checks of the whole export and the exposure scan
// beside the replay, NVIDIA's rule beside all of them, the replay's model
// beside its regions, its four runs two at a time): its answer must not
// depend on which of them the scheduler runs first. Each audit here is made on one core,
// where the goroutines take turns, and on two, where they run at once, and
// the JSON of the two must be the same, byte for byte.
func TestAuditAlikeOnOneCoreAndTwo(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	audits := []struct{ before, after string }{
		{"pipeline-pageable", "pipeline-pinned"},
		{"many-copies-small", ""},
		{"torch-prefetch-backtrace", ""},
	}
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	for _, a := range audits {
		var got [2][]byte
		for k, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			after := ""
			if a.after != "" {
				after = filepath.Join(dir, a.after)
			}
			out, err := Audit(context.Background(), filepath.Join(dir, a.before), after, AuditOptions{NoRule: true})
			if err != nil {
				t.Fatalf("%s on %d cores: %v", a.before, procs, err)
			}
			var b bytes.Buffer
			if err := report.WriteJSON(&b, report.AuditEnvelope(out, "test")); err != nil {
				t.Fatal(err)
			}
			got[k] = b.Bytes()
		}
		if len(got[0]) == 0 || !bytes.Equal(got[0], got[1]) {
			t.Errorf("%s %s: the audit on one core and on two differ (%d and %d bytes of JSON)", a.before, a.after, len(got[0]), len(got[1]))
		}
	}
}
