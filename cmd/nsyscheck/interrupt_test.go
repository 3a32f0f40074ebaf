package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestInterruption: a step a signal stopped is said once, "interrupted"
// plainly, with where it stopped and without the context's own words; a
// step that said it was interrupted keeps its words; any other error is
// its own.
func TestInterruption(t *testing.T) {
	replayStopped := fmt.Errorf("replaying the timeline: %w", fmt.Errorf("stopped after 0 calls and ops: %w", context.Canceled))
	readStopped := fmt.Errorf("x.sqlite: interrupted while reading the export: %w", context.Canceled)
	other := errors.New("x.sqlite: not an SQLite database")
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "interrupted while auditing a.sqlite; nothing was written"},
		{errInterrupted, "interrupted while auditing a.sqlite; nothing was written"},
		{replayStopped, "interrupted while auditing a.sqlite (replaying the timeline: stopped after 0 calls and ops); nothing was written"},
		{readStopped, readStopped.Error()},
		{other, other.Error()},
	} {
		got := interruption(c.err, "auditing", []string{"a.sqlite"}).Error()
		if got != c.want {
			t.Errorf("interruption(%v) = %q, want %q", c.err, got, c.want)
		}
		if strings.Count(got, "interrupted") > 1 || c.err != readStopped && strings.Contains(got, "context canceled") {
			t.Errorf("interruption(%v) = %q says it twice, or in the context's words", c.err, got)
		}
	}
}
