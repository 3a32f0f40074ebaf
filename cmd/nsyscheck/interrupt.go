package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// interruptGrace is how long a step has, once SIGINT or SIGTERM arrived, to
// stop at its next look at the context before the command stops without
// it: within it the readers stop their queries and loops and nsys is
// stopped and its partial export removed; what is left is computing in
// memory, which the exit ends.
const interruptGrace = 500 * time.Millisecond

// signalContext is the command's context: cancelled by SIGINT (Ctrl-C) or
// SIGTERM, which then no longer end the process by themselves; stop
// restores their default action. A command makes it once, first, so that
// no signal falls between two of them.
func signalContext() (ctx context.Context, stop func()) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// errInterrupted is what a step stopped by a signal returns when it had no
// error of its own to say so.
var errInterrupted = errors.New("interrupted")

// untilInterrupted runs step, which writes nothing the user keeps (reading
// and checking inputs, building reports in memory), and returns what it
// returns, unless ctx is cancelled before it is done and it then does not
// return within interruptGrace: the command is interrupted, and stops
// (exit 130) within a second of the signal whatever the input.
func untilInterrupted[T any](ctx context.Context, step func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := step()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(interruptGrace):
		var zero T
		return zero, errInterrupted
	}
}

// interruption is the error of a command a signal stopped while it was
// doing what (of the inputs paths): the step's own, where it said it was
// interrupted and what it stopped (an nsys export, a read), else one
// naming the inputs, "interrupted" said once and plainly, with the step
// the signal stopped where it said one ("replaying the timeline: stopped
// after 1024 calls and ops"; the context's own "context canceled" left
// out).
func interruption(err error, what string, paths []string) error {
	step := ""
	switch {
	case err == nil || errors.Is(err, errInterrupted):
	case errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "interrupted"):
		step = " (" + strings.TrimSuffix(err.Error(), ": "+context.Canceled.Error()) + ")"
	default:
		return err
	}
	shown := make([]string, len(paths))
	for i, p := range paths {
		shown[i] = shownPath(p)
	}
	return fmt.Errorf("interrupted while %s %s%s; nothing was written", what, strings.Join(shown, ", "), step)
}
