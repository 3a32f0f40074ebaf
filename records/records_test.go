package records

import (
	"errors"
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
