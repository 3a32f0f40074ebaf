package records

import (
	"sync"
	"sync/atomic"
)

// PipeBatch is how many calls and operations a batch of Pipe carries from
// the goroutine that hands them on to the one that handles them.
const PipeBatch = 1024

// Piped is the far end of a Pipe: the goroutine that hands its records on
// to the handler behind it.
type Piped struct {
	h    Handler
	cur  *pipeBatch
	free chan *pipeBatch
	full chan *pipeBatch
	// sent says a batch has been handed on since the last drain.
	sent bool
	// mu guards err, the handler's first error; bad says there is one,
	// looked at by every call.
	mu     sync.Mutex
	err    error
	bad    atomic.Bool
	done   chan struct{}
	closed sync.Once
}

// pipeItem is one call or operation, copied (the reader's record, and the
// call it points to, are its own again once handed on): an operation's
// call is copied beside it.
type pipeItem struct {
	op      Op
	call    Call
	isCall  bool
	hasCall bool
}

// pipeBatch is one batch of records; ack, where not nil, is closed once
// the batch has been handled (Pipe's drain).
type pipeBatch struct {
	items []pipeItem
	ack   chan struct{}
}

// Pipe returns a Handler that hands the calls and operations given to it on
// to h on a goroutine of its own, PipeBatch at a time and two batches
// behind at most, so that what gives the records and what h does with them
// run side by side; every other kind is handed on by the caller's
// goroutine once h has handled every record before it, so that h sees
// every record in the order given, one at a time. h's first error is
// returned by the calls after it has come back (at the latest by the one
// whose batch is handed on after it's, or any other kind's), and by Drain;
// h sees no record after it.
// Close must be called once the records are all given (it drains).
func Pipe(h Handler) (Handler, *Piped) {
	p := &Piped{h: h, free: make(chan *pipeBatch, 2), full: make(chan *pipeBatch, 2), done: make(chan struct{})}
	for range 2 {
		p.free <- &pipeBatch{items: make([]pipeItem, 0, PipeBatch)}
	}
	p.cur = <-p.free
	go p.handle()
	out := Handler{
		Meta:       drained(p, h.Meta),
		Diag:       drained(p, h.Diag),
		Gap:        drainedValue(p, h.Gap),
		Range:      drained(p, h.Range),
		CallsAhead: drainedValue(p, h.CallsAhead),
		Sync:       drained(p, h.Sync),
		Event:      drained(p, h.Event),
		Graph:      drained(p, h.Graph),
		Stream:     drained(p, h.Stream),
		APISum:     drained(p, h.APISum),
		CopySum:    drained(p, h.CopySum),
		RangeSum:   drained(p, h.RangeSum),
		Counts:     drained(p, h.Counts),
		Drain: func() error {
			if err := p.Drain(); err != nil || h.Drain == nil {
				return err
			}
			return h.Drain()
		},
	}
	if h.Call != nil {
		out.Call = func(c *Call) error {
			if p.bad.Load() {
				return p.failed()
			}
			p.cur.items = append(p.cur.items, pipeItem{call: *c, isCall: true})
			return p.handOn()
		}
	}
	if h.Op != nil {
		out.Op = func(o *Op) error {
			if p.bad.Load() {
				return p.failed()
			}
			it := pipeItem{op: *o}
			if o.Call != nil {
				it.call, it.hasCall = *o.Call, true
			}
			p.cur.items = append(p.cur.items, it)
			return p.handOn()
		}
	}
	return out, p
}

// handOn sends the current batch once it is full and returns h's error,
// if it has met one.
func (p *Piped) handOn() error {
	if len(p.cur.items) < PipeBatch {
		return nil
	}
	p.full <- p.cur
	p.cur = <-p.free
	p.sent = true
	return p.failed()
}

// fail keeps err, h's error, unless it has met one before.
func (p *Piped) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.bad.Store(true)
}

// failed is h's first error, nil while it has met none.
func (p *Piped) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Drain waits until h has handled every record given so far and returns
// its first error.
func (p *Piped) Drain() error {
	if p.sent || len(p.cur.items) > 0 {
		ack := make(chan struct{})
		p.cur.ack = ack
		p.full <- p.cur
		<-ack
		p.cur = <-p.free
		p.sent = false
	}
	return p.failed()
}

// Close drains the pipe, stops its goroutine and returns h's first error.
// It may be called more than once.
func (p *Piped) Close() error {
	p.closed.Do(func() {
		p.Drain()
		close(p.full)
		<-p.done
	})
	return p.failed()
}

// handle is the pipe's goroutine: it hands each batch's records to h,
// until h fails, and gives the batch back.
func (p *Piped) handle() {
	defer close(p.done)
	var err error
	for b := range p.full {
		for i := range b.items {
			if err != nil {
				break
			}
			it := &b.items[i]
			switch {
			case it.isCall:
				err = p.h.Call(&it.call)
			default:
				if it.hasCall {
					it.op.Call = &it.call
				}
				err = p.h.Op(&it.op)
			}
		}
		if err != nil {
			p.fail(err)
		}
		b.items = b.items[:0]
		ack := b.ack
		b.ack = nil
		p.free <- b
		if ack != nil {
			close(ack)
		}
	}
}

// drained hands a record of a kind Pipe does not batch to f once what came
// before it has been handled; nil stays nil.
func drained[T any](p *Piped, f func(*T) error) func(*T) error {
	if f == nil {
		return nil
	}
	return func(v *T) error {
		if err := p.Drain(); err != nil {
			return err
		}
		if err := f(v); err != nil {
			p.fail(err)
			return err
		}
		return nil
	}
}

// drainedValue is drained for the kinds handed on by value (gaps, the
// count of calls ahead: a few a read).
func drainedValue[T any](p *Piped, f func(T) error) func(T) error {
	if f == nil {
		return nil
	}
	g := drained(p, func(v *T) error { return f(*v) })
	return func(v T) error { return g(&v) }
}
