package replay

import (
	"context"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// ReplayRuns is Replay with the regions' runs of calls read one way
// always: through the index (indexed), or walked call by call.
func ReplayRuns(ctx context.Context, tl *timeline.Timeline, opts Options, indexed bool) (*Result, error) {
	mode := indexNever
	if indexed {
		mode = indexAlways
	}
	return replay(ctx, tl, opts, mode)
}

// RunsIndexed reports whether Replay reads tl's runs through the index.
func RunsIndexed(tl *timeline.Timeline) bool { return runsIndexed(tl, indexAuto) }
