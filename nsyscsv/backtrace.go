package nsyscsv

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/records"
)

// twinRows leaves nsys's backtrace rows out of cuda_api_trace. In a
// capture with call stacks (nsys profile --cudabacktrace) nsys keeps,
// beside each call it took a stack of, a record of the stack that the
// report lists as one more call: the same name, correlation id, process
// and thread, starting before the call and ending after it (by 50 ns to a
// few µs), in the row just before the call's among its thread's. Each row
// waits for its thread's next one to tell which it is; a row that repeats
// a call's times exactly is no such record, and is left for the checks
// across records to refuse.
type twinRows struct {
	pending map[[2]int64]records.Call
	// twins counts the backtrace rows left out, by call name, and twinNs
	// totals their durations.
	twins, twinNs map[string]int64
}

func newTwinRows() *twinRows {
	return &twinRows{pending: map[[2]int64]records.Call{}, twins: map[string]int64{}, twinNs: map[string]int64{}}
}

// push takes the next row's call and returns the previous row of its
// thread where that is a call (ok), nothing where it was the backtrace
// record of c or the thread's first row.
func (t *twinRows) push(c records.Call) (prev records.Call, ok bool) {
	k := [2]int64{c.PID, c.TID}
	p, had := t.pending[k]
	t.pending[k] = c
	if !had {
		return records.Call{}, false
	}
	if p.Corr == c.Corr && p.Name == c.Name && p.Start < c.Start && p.End > c.End {
		t.twins[p.Name]++
		t.twinNs[p.Name] += p.End - p.Start
		return records.Call{}, false
	}
	return p, true
}

// flush returns the calls still waiting, in row order.
func (t *twinRows) flush() []records.Call {
	out := make([]records.Call, 0, len(t.pending))
	for _, c := range t.pending {
		out = append(out, c)
	}
	clear(t.pending)
	sort.Slice(out, func(i, j int) bool { return out[i].Row < out[j].Row })
	return out
}

// dropSumTwins leaves out of cuda_api_sum the rows that tally backtrace
// records: nsys stats lists an API with call stacks twice under one name,
// once for its calls and once for the records of their stacks. Of two rows
// of a name, the one whose count is the calls' is kept where the other's
// is the records' (the smaller total where both counts agree: each record
// spans its call). Some APIs (cuLaunchKernel of a PyTorch capture with
// --cudabacktrace) get one row, tallying the calls and the records
// together: its count is then the calls' and the records', and it is read
// as the calls' (their total less the records' durations; no minimum or
// maximum, which may be a record's). Anything else is left for checkSums
// to refuse.
func dropSumTwins(sums []records.APISum, calls, twins, twinNs map[string]int64) []records.APISum {
	rows := map[string][]int{}
	for i, s := range sums {
		rows[s.Name] = append(rows[s.Name], i)
	}
	drop := map[int]bool{}
	for name, at := range rows {
		if twins[name] == 0 {
			continue
		}
		if s := &sums[at[0]]; len(at) == 1 && s.Calls == calls[name]+twins[name] {
			s.Calls, s.TotalNs, s.MinNs, s.MaxNs = calls[name], s.TotalNs-twinNs[name], 0, 0
			continue
		}
		if len(at) != 2 {
			continue
		}
		a, b := sums[at[0]], sums[at[1]]
		switch {
		case a.Calls == calls[name] && b.Calls == twins[name] && (a.Calls != b.Calls || a.TotalNs <= b.TotalNs):
			drop[at[1]] = true
		case b.Calls == calls[name] && a.Calls == twins[name]:
			drop[at[0]] = true
		}
	}
	if len(drop) == 0 {
		return sums
	}
	out := make([]records.APISum, 0, len(sums)-len(drop))
	for i, s := range sums {
		if !drop[i] {
			out = append(out, s)
		}
	}
	return out
}
