package nsyssqlite

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

const (
	pipelineBacktrace = "../testdata/captures/pipeline-backtrace/pipeline-backtrace.sqlite"
	torchBacktrace    = "../testdata/captures/torch-prefetch-backtrace/torch-prefetch-backtrace.sqlite"
)

// joined reads an export's copies joined to their calls, with the calls'
// stacks where stacks is set, and the gaps it reports.
func joined(t *testing.T, p string, stacks bool) ([]records.Op, []records.Gap) {
	t.Helper()
	var ops []records.Op
	var gaps []records.Gap
	h := records.Handler{
		Gap: func(g records.Gap) error { gaps = append(gaps, g); return nil },
		Op: func(o *records.Op) error {
			c := *o
			if o.Call != nil {
				call := *o.Call
				c.Call = &call
			}
			ops = append(ops, c)
			return nil
		},
	}
	sel := records.Selection{JoinCalls: true, Stacks: stacks, Ops: []records.OpKind{records.OpCopy}}
	if _, err := Read(context.Background(), open(t, p), p, sel, h); err != nil {
		t.Fatal(err)
	}
	return ops, gaps
}

// TestStacksGolden reads the stacks of the pageable copies' calls of both
// captures with call stacks: per distinct stack, its frames (symbol and
// module's base name) as the golden file holds them, and how many calls
// share it.
func TestStacksGolden(t *testing.T) {
	for _, p := range []string{pipelineBacktrace, torchBacktrace} {
		ops, gaps := joined(t, p, true)
		if len(gaps) != 0 {
			t.Fatalf("%s: gaps %v", p, gaps)
		}
		byFrames := map[string]int{}
		with, pageable := 0, 0
		for _, o := range ops {
			isPageable := o.Src == vocab.MemPageable || o.Dst == vocab.MemPageable
			if isPageable {
				pageable++
			}
			if o.Call == nil || o.Call.Stack == nil {
				continue
			}
			if !isPageable {
				t.Fatalf("%s: copy %d from %s to %s carries a stack: only pageable copies' calls are read", p, o.Corr, o.Src, o.Dst)
			}
			with++
			var b strings.Builder
			for i, f := range o.Call.Stack.Frames {
				sym := f.Symbol
				if f.Unresolved {
					sym = "(unresolved)"
				}
				fmt.Fprintf(&b, "  %2d %s [%s]\n", i, sym, path.Base(f.Module))
			}
			byFrames[b.String()]++
		}
		keys := make([]string, 0, len(byFrames))
		for k := range byFrames {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out strings.Builder
		fmt.Fprintf(&out, "%d copies, %d from or to pageable memory, %d of them with a stack, %d distinct stacks\n", len(ops), pageable, with, len(keys))
		for _, k := range keys {
			fmt.Fprintf(&out, "\n%d calls:\n%s", byFrames[k], k)
		}
		golden.Assert(t, "testdata/"+strings.TrimSuffix(path.Base(p), ".sqlite")+".stacks.golden.txt", []byte(out.String()))
	}
}

// TestStacksAgainstSQL checks each call's stack against plain SQL: the
// backtrace row with the call's correlation id names the callchain whose
// frames, by depth, are the stack's.
func TestStacksAgainstSQL(t *testing.T) {
	db := open(t, torchBacktrace)
	ops, _ := joined(t, torchBacktrace, true)
	checked := 0
	for _, o := range ops {
		if o.Call == nil || o.Call.Stack == nil {
			continue
		}
		var id int64
		if err := db.QueryRow(`SELECT callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = ? AND eventClass = 67`, o.Corr).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if id != o.Call.Stack.ID {
			t.Fatalf("call %d: stack %d, the export says %d", o.Corr, o.Call.Stack.ID, id)
		}
		rows, err := db.Query(`SELECT s.value, m.value FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module WHERE c.id = ? ORDER BY c.stackDepth`, id)
		if err != nil {
			t.Fatal(err)
		}
		var want []records.Frame
		for rows.Next() {
			var f records.Frame
			if err := rows.Scan(&f.Symbol, &f.Module); err != nil {
				t.Fatal(err)
			}
			want = append(want, f)
		}
		rows.Close()
		if len(want) != len(o.Call.Stack.Frames) {
			t.Fatalf("call %d: %d frames, the export has %d", o.Corr, len(o.Call.Stack.Frames), len(want))
		}
		for i, f := range o.Call.Stack.Frames {
			if f.Symbol != want[i].Symbol || f.Module != want[i].Module {
				t.Fatalf("call %d frame %d: %+v, the export has %+v", o.Corr, i, f, want[i])
			}
		}
		checked++
	}
	if checked != 135 {
		t.Fatalf("%d calls with a stack checked, want the 135 pageable copy calls nsys took one of", checked)
	}
}

// TestBacktraceRowsAreNoCalls reads every call of the pipeline capture with
// stacks: the 156 backtrace rows are left out, so each correlation id
// comes once, and the counts agree.
func TestBacktraceRowsAreNoCalls(t *testing.T) {
	seen := map[int64]int{}
	var counts records.Counts
	h := records.Handler{
		Call:   func(c *records.Call) error { seen[c.Corr]++; return nil },
		Counts: func(c *records.Counts) error { counts = *c; return nil },
	}
	if _, err := Read(context.Background(), open(t, pipelineBacktrace), pipelineBacktrace, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	total := 0
	for corr, n := range seen {
		if n != 1 {
			t.Fatalf("correlation id %d read %d times", corr, n)
		}
		total += n
	}
	var rows, bt int
	db := open(t, pipelineBacktrace)
	if err := db.QueryRow(`SELECT count(*), sum(eventClass = 67) FROM CUPTI_ACTIVITY_KIND_RUNTIME`).Scan(&rows, &bt); err != nil {
		t.Fatal(err)
	}
	if bt != 156 || total != rows-bt || counts.Calls != int64(total) {
		t.Fatalf("%d calls read, counted %d; the table has %d rows, %d of them backtrace rows", total, counts.Calls, rows, bt)
	}
}

// TestNoStacksSaysWhy reads a capture made without stacks, and one whose
// stack table was dropped: each says why through a FactStacks gap, and no
// call carries a stack; without Selection.Stacks no gap is said.
func TestNoStacksSaysWhy(t *testing.T) {
	cases := []struct {
		path, want string
	}{
		{"../testdata/captures/pipeline-pageable/pipeline-pageable.sqlite", "nsys took none"},
		{fixture.SQLite(t, pipelineBacktrace, `DROP TABLE CUDA_CALLCHAINS`), "only with CPU sampling on"},
	}
	for _, c := range cases {
		ops, gaps := joined(t, c.path, true)
		if len(gaps) != 1 || gaps[0].Fact != records.FactStacks || !strings.Contains(gaps[0].Reason, c.want) {
			t.Errorf("%s: gaps %v, want one call-stacks gap saying %q", c.path, gaps, c.want)
		}
		for _, o := range ops {
			if o.Call != nil && o.Call.Stack != nil {
				t.Fatalf("%s: copy %d carries a stack", c.path, o.Corr)
			}
		}
		if _, gaps := joined(t, c.path, false); len(gaps) != 0 {
			t.Errorf("%s: without Stacks, gaps %v", c.path, gaps)
		}
	}
}

// TestDamagedStacksRefused refuses a backtrace row that names a stack the
// export lacks, and a stack with a gap in its depths.
func TestDamagedStacksRefused(t *testing.T) {
	cases := []struct {
		stmt, want string
	}{
		{`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET callchainId = callchainId + 100000 WHERE eventClass = 67`, "does not hold"},
		{`DELETE FROM CUDA_CALLCHAINS WHERE stackDepth = 2`, "without a gap"},
	}
	for _, c := range cases {
		p := fixture.SQLite(t, pipelineBacktrace, c.stmt)
		h := records.Handler{Op: func(*records.Op) error { return nil }}
		_, err := Read(context.Background(), open(t, p), p, records.Selection{JoinCalls: true, Stacks: true}, h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.stmt, err, c.want)
		}
	}
}
