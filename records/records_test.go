package records

import (
	"errors"
	"strings"
	"testing"
)

func TestTeeCallsEachWantedHandlerInTurn(t *testing.T) {
	var got []string
	a := Handler{Call: func(c *Call) error { got = append(got, "a:"+c.Name); return nil }}
	b := Handler{
		Call: func(c *Call) error { got = append(got, "b:"+c.Name); return nil },
		Gap:  func(g Gap) error { got = append(got, "b:gap:"+string(g.Fact)); return nil },
	}
	h := Tee(a, b)
	if h.Op != nil || h.Range != nil {
		t.Fatalf("Tee wants kinds none of its handlers want")
	}
	if err := h.Call(&Call{Name: "cudaMemcpy"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Gap(Gap{Fact: FactNVTX}); err != nil {
		t.Fatal(err)
	}
	want := []string{"a:cudaMemcpy", "b:cudaMemcpy", "b:gap:nvtx-ranges"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestTeeStopsAtTheFirstError(t *testing.T) {
	stop := errors.New("stop")
	called := false
	h := Tee(Handler{Op: func(*Op) error { return stop }}, Handler{Op: func(*Op) error { called = true; return nil }})
	if err := h.Op(&Op{}); !errors.Is(err, stop) {
		t.Fatalf("err = %v, want %v", err, stop)
	}
	if called {
		t.Fatal("the second handler ran after the first failed")
	}
}

// TestTeeSummariesAndCounts: the summaries and counts reach every handler
// that wants them, in turn.
func TestTeeSummariesAndCounts(t *testing.T) {
	var got []string
	a := Handler{APISum: func(s *APISum) error { got = append(got, "a:"+s.Name); return nil },
		Counts: func(c *Counts) error { got = append(got, "a:counts"); return nil }}
	b := Handler{APISum: func(s *APISum) error { got = append(got, "b:"+s.Name); return nil },
		RangeSum: func(s *RangeSum) error { got = append(got, "b:"+s.Name); return nil }}
	h := Tee(a, b)
	if h.CopySum != nil {
		t.Fatal("Tee wants copy summaries neither handler wants")
	}
	for _, err := range []error{h.APISum(&APISum{Name: "cudaFree"}), h.RangeSum(&RangeSum{Name: "step"}), h.Counts(&Counts{Calls: 3})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := "a:cudaFree b:cudaFree b:step a:counts"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("got %s, want %s", s, want)
	}
}

// TestProgramThreadOrder: the program's thread has the most
// cudaMemcpyAsync calls, then the most cudaMemcpy calls, then the most
// calls, then the lower ids; Why says which step chose it.
func TestProgramThreadOrder(t *testing.T) {
	mk := func(pid, tid int64, names ...string) ThreadCount {
		c := ThreadCount{PID: pid, TID: tid}
		for _, n := range names {
			c.Add(n, 1)
		}
		return c
	}
	ts := []ThreadCount{
		mk(2, 2, "cudaFree", "cudaFree", "cudaFree"),
		mk(1, 5, "cudaMemcpy"),
		mk(1, 4, "cudaMemcpy"),
		mk(3, 3, "cudaMemcpyAsync"),
	}
	SortThreads(ts)
	order := []int64{3, 4, 5, 2}
	for i, tid := range order {
		if ts[i].TID != tid {
			t.Fatalf("order %+v, want tids %v", ts, order)
		}
	}
	for i, want := range []string{"cudaMemcpyAsync", "most cudaMemcpy", "most cudaMemcpy", "most CUDA calls"} {
		if !strings.Contains(ts[i].Why(), want) {
			t.Errorf("thread %d: %q", ts[i].TID, ts[i].Why())
		}
	}
}
