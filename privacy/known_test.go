package privacy

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/source"
)

// ScanKnown gives Scan's report where what it is told is what the file
// holds, takes what it is told for the runtime table it names (a process
// said to have made calls is profiled), and ignores it for another table.
func TestScanKnown(t *testing.T) {
	p := exposedFixture(t, t.TempDir())
	f, err := source.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	report := func(k Known) (*Report, string) {
		t.Helper()
		r, err := ScanKnown(ctx, f, k)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return r, string(b)
	}
	plain, want := report(Known{})
	if len(plain.ProfiledPIDs) != 1 {
		t.Fatalf("profiled %v, want the program alone", plain.ProfiledPIDs)
	}
	const table = "CUPTI_ACTIVITY_KIND_RUNTIME"
	if _, got := report(Known{RuntimeTable: table, RuntimePIDs: plain.ProfiledPIDs}); got != want {
		t.Errorf("told what the file holds:\n%s\nwant\n%s", got, want)
	}
	told, _ := report(Known{RuntimeTable: table, RuntimePIDs: []int64{plain.ProfiledPIDs[0], otherPID}})
	if !slices.Equal(told.ProfiledPIDs, []int64{plain.ProfiledPIDs[0], otherPID}) {
		t.Errorf("told %d made calls too: profiled %v", otherPID, told.ProfiledPIDs)
	}
	if _, got := report(Known{RuntimeTable: "CUPTI_ACTIVITY_KIND_RUNTIME_V2", RuntimePIDs: []int64{otherPID}}); got != want {
		t.Errorf("told of another table:\n%s\nwant\n%s", got, want)
	}
}
