// Package replay simulates a capture's timeline (package timeline) as a
// discrete-event program: each host thread runs its calls in order with
// the measured host time between them, each stream its ops in order, and
// every dependency the capture recorded holds (launches, stream order,
// host waits, event waits, copy engines). Replayed as captured it must come
// close to the capture; the what-if then re-costs every copy from pageable
// host memory as a pinned copy and replays again, at low, middle and high
// costs, to predict each region's time with a bound.
//
// # A fit that can fail
//
// Host work — the time between a thread's calls, a call's own time when it
// waits for nothing — keeps its measured value. Every delay behind a
// dependency is its class's typical one (Typical), in the replay as
// captured and in the what-if alike: an op's start after its launch (from
// the call's end when the call returns without waiting for it, from its
// start when the call waits), after its stream predecessor, after an event
// of another stream; a waiting call's return after its work. So the fit per
// region (Region.Fit) measures what the model misses, and Misfits name the
// classes of calls and ops the capture shows later than the model allows,
// one step at a time: a dependency or a cost it lacks.
//
// # Costs
//
// A re-costed copy takes its GPU time and its call's host time from the
// capture's own pinned copies of its direction and size class (a pinned
// async call's time from the capture's pinned async calls of any size),
// else from rates measured outside it (NewRateCoster: a run folder's timed
// copies, bounded by the timed sizes within 4x, as the audit bounds them,
// else the link); each cost says where it came from (CostUse). How the
// program pins decides what pinning costs the host beside the copy
// (PinBy): nothing for buffers allocated pinned, a host copy of the bytes
// in the high bound for a framework that copies each batch into pinned
// memory, and that copy at every cost on the copying call's thread for a
// pin thread of the program's own interpreter, whose work lands there.
//
// # What it cannot see
//
//   - CPU work outside CUDA calls changes with the fix but is held fixed:
//     host code between calls that ran faster once the driver no longer
//     staged the copies, a framework's pin thread competing with the main one,
//     XLA staging into its own pinned buffer on its own threads (the trace
//     shows pinned copies there, and nothing to re-cost), one-time start-up
//     (module and library loading, allocator warm-up) that differs from run
//     to run.
//   - Contention the capture before pinning does not show: pinned copies of
//     both directions at once share the link (each ran 4-10% slower than
//     alone on the H200), where pageable ones never overlapped.
//   - Dependencies outside the trace: the legacy default stream's implicit
//     synchronisation, a sync or allocation inside a library, page-fault
//     migrations of managed memory (kept at their measured times), a CUDA
//     graph's internal order (its pageable memcpy nodes are kept as
//     measured).
//
// The result is typed numbers only; words belong to the report.
package replay
