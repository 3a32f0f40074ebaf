package records

import (
	"errors"
	"fmt"
	"testing"
)

// log is a handler that writes down every record it is given, in order,
// and fails on the record failAt names ("" for none).
type log struct {
	seen   []string
	failAt string
}

func (l *log) add(s string) error {
	l.seen = append(l.seen, s)
	if s == l.failAt {
		return fmt.Errorf("refused %s", s)
	}
	return nil
}

func (l *log) handler() Handler {
	return Handler{
		Meta:  func(m *Meta) error { return l.add("meta " + m.GPU) },
		Range: func(r *Range) error { return l.add("range " + r.Name) },
		Call:  func(c *Call) error { return l.add(fmt.Sprintf("call %s %d", c.Name, c.Corr)) },
		Op: func(o *Op) error {
			s := fmt.Sprintf("op %d", o.Corr)
			if o.Call != nil {
				s += " of " + o.Call.Name
			}
			return l.add(s)
		},
		Sync:   func(s *Sync) error { return l.add(fmt.Sprintf("sync %d", s.Corr)) },
		Counts: func(c *Counts) error { return l.add("counts") },
	}
}

// feed gives h what a reader gives: a range, calls, copies joined to a
// call, a synchronisation, counts, with Drain after each table, each
// record one the reader reuses (as records.Handler says it may). It
// returns the first error, and the records given until then.
func feed(h Handler, calls int) (given int, err error) {
	try := func(e error) bool {
		if e != nil && err == nil {
			err = e
		}
		return err == nil
	}
	var (
		m Meta
		r Range
		c Call
		o Op
		s Sync
	)
	m.GPU = "H200"
	if !try(h.Meta(&m)) {
		return given, err
	}
	r.Name = "step"
	if given++; !try(h.Range(&r)) {
		return given, err
	}
	for i := range calls {
		c = Call{Name: "cudaMemcpyAsync", Corr: int64(i)}
		if given++; !try(h.Call(&c)) {
			return given, err
		}
	}
	if !try(h.Drain()) {
		return given, err
	}
	for i := range calls {
		c = Call{Name: fmt.Sprintf("call%d", i%3), Corr: int64(i)}
		o = Op{Kind: OpCopy, Corr: int64(i), Call: &c}
		if given++; !try(h.Op(&o)) {
			return given, err
		}
		c.Name, o.Corr = "reused", -1
	}
	if !try(h.Drain()) {
		return given, err
	}
	s.Corr = 7
	if given++; !try(h.Sync(&s)) {
		return given, err
	}
	given++
	try(h.Counts(&Counts{}))
	return given, err
}

// serial is the handler behind no pipe: Drain does nothing.
func serial(h Handler) Handler {
	h.Drain = func() error { return nil }
	return h
}

// TestPipeAsSerial: records handed through a Pipe reach its handler in the
// order given and with their values as given (the reader's reuse of a
// record after it is handed on changes nothing), and a handler's error on
// any record, in the first batch, a later one or the last one cut short,
// stops the feed with that error where a table is drained, the handler
// seeing no record after it, as without the pipe.
func TestPipeAsSerial(t *testing.T) {
	const calls = 3*PipeBatch + 17
	fails := []string{"", "range step", "call cudaMemcpyAsync 0", fmt.Sprintf("call cudaMemcpyAsync %d", PipeBatch+5),
		fmt.Sprintf("call cudaMemcpyAsync %d", calls-1), "op 3 of call0", fmt.Sprintf("op %d of call%d", 2*PipeBatch, 2*PipeBatch%3),
		fmt.Sprintf("op %d of call%d", calls-1, (calls-1)%3), "sync 7", "counts"}
	for _, at := range fails {
		want := &log{failAt: at}
		_, werr := feed(serial(want.handler()), calls)
		got := &log{failAt: at}
		h, p := Pipe(got.handler())
		_, gerr := feed(h, calls)
		cerr := p.Close()
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || fmt.Sprint(cerr) != fmt.Sprint(werr) {
			t.Errorf("failing at %q: the pipe's error %v, on close %v; without it %v", at, gerr, cerr, werr)
		}
		if len(got.seen) != len(want.seen) {
			t.Errorf("failing at %q: the pipe's handler saw %d records, without it %d", at, len(got.seen), len(want.seen))
			continue
		}
		for i := range got.seen {
			if got.seen[i] != want.seen[i] {
				t.Errorf("failing at %q: record %d through the pipe %q, without it %q", at, i, got.seen[i], want.seen[i])
				break
			}
		}
	}
}

// TestPipeErrorLater: a handler's error comes back by a later record's
// call at most a batch and a half after it (the pipe is two batches deep),
// by Drain, and by every call after it.
func TestPipeErrorLater(t *testing.T) {
	bad := errors.New("bad call")
	n := 0
	h, p := Pipe(Handler{Call: func(*Call) error {
		if n++; n == 10 {
			return bad
		}
		return nil
	}})
	defer p.Close()
	var c Call
	given := 0
	for given < 10*PipeBatch {
		given++
		if err := h.Call(&c); err != nil {
			if !errors.Is(err, bad) {
				t.Fatalf("call %d: %v", given, err)
			}
			break
		}
	}
	if given > 3*PipeBatch {
		t.Errorf("the error came back after %d calls", given)
	}
	if n != 10 {
		t.Errorf("the handler was given %d calls, not 10, the last the one it refused", n)
	}
	if err := p.Drain(); !errors.Is(err, bad) {
		t.Errorf("Drain: %v", err)
	}
	for range PipeBatch + 1 {
		if err := h.Call(&c); !errors.Is(err, bad) {
			t.Fatalf("a call after the error: %v", err)
		}
	}
}
