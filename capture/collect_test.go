package capture

import (
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// TestCollectKeepsEveryCallInOrder feeds the collector calls with no count
// told, with a count below, at and above the calls that come: c.Calls holds
// them all, in the order they came, whatever the count said.
func TestCollectKeepsEveryCallInOrder(t *testing.T) {
	for _, ahead := range []int{0, 2, 5, 9} {
		c := &Capture{}
		h, keep := collect(c)
		if ahead > 0 {
			if err := h.CallsAhead(ahead); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			if err := h.Call(&records.Call{Name: "cudaMemcpyAsync", Start: int64(10 * i), End: int64(10*i + 5), Corr: int64(i + 1), PID: 7, TID: 8}); err != nil {
				t.Fatal(err)
			}
		}
		keep()
		if len(c.Calls) != 5 {
			t.Fatalf("ahead %d: %d calls kept, want 5", ahead, len(c.Calls))
		}
		for i, a := range c.Calls {
			if a.CorrelationID != int64(i+1) || a.Start != int64(10*i) || a.PID != 7 || a.TID != 8 {
				t.Fatalf("ahead %d: call %d is %+v", ahead, i, a)
			}
		}
	}
}
