package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/nsys"
)

// askLimit bounds one question a run asks a tool before it profiles
// (nvidia-smi's queries, nvcc --version, nsys --version, the reports and
// rules nsys lists, a binding tried with `true`). Each answers within seconds; one that does not (a wedged
// driver, a wrapper script waiting on something) is an answer in itself,
// not a reason for the run to wait for ever. A variable for the tests.
var askLimit = 60 * time.Second

// askTool runs name with args, bounded by askLimit and ctx, and returns
// its stdout and stderr together (their head and tail, where a tool writes
// without end: nsys.OutputBuffer). It runs in its own process group
// (nsys.Command): cancelling stops it and everything it started, and
// whatever of the group is left once it ends is killed, so a child that
// holds its output open cannot keep the run waiting after it is stopped
// (--timeout, Ctrl-C) or gives up.
func askTool(ctx context.Context, name string, args ...string) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, askLimit)
	defer cancel()
	// A question has nothing to save: stop the whole group at once (a
	// child may ignore SIGTERM), wait at most a second for its output, and
	// kill it too should nsyscheck die first (nsys.KillOnCancel).
	cmd := nsys.KillOnCancel(nsys.Command(actx, "", nil, name, args...))
	out, err := nsys.CombinedOutput(cmd)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", askLimit)
	}
	return out, err
}
