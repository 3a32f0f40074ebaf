package csvheader

import (
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

func TestNorm(t *testing.T) {
	for in, want := range map[string][2]string{
		"Start (ns)": {"start", "ns"}, "Thread Name": {"threadname", ""}, "Time(%)": {"time", "%"},
		"T-Pri": {"tpri", ""}, "\uFEFFDuration (us)": {"duration", "us"}, "Bytes (MB)": {"bytes", "mb"},
	} {
		if k, u := Norm(in); k != want[0] || u != want[1] {
			t.Errorf("Norm(%q) = %q, %q; want %q, %q", in, k, u, want[0], want[1])
		}
	}
}

func TestResolve(t *testing.T) {
	h, err := Resolve("x.csv", "cuda_api_trace", []string{"Name", "Start (us)", "Duration (ns)", "CorrelationId", "Tid"}, nsysdb.APITraceColumns)
	if err != nil {
		t.Fatal(err)
	}
	if h.Index["name"] != 0 || h.Index["start"] != 1 || h.Index["corrid"] != 3 || h.Index["tid"] != 4 || h.Scale["start"] != 1e3 || h.Scale["duration"] != 1 {
		t.Errorf("resolved %+v", h)
	}
	if _, ok := h.Index["pid"]; ok {
		t.Error("an absent optional column was found")
	}
	for _, c := range []struct {
		header []string
		want   string
	}{
		{[]string{"Name", "Start (ns)", "Duration (ns)"}, `has no "CorrID" column`},
		{[]string{"Name", "Start", "Duration (ns)", "CorrID"}, "the time column has no unit"},
		{[]string{"Name", "Start (fortnights)", "Duration (ns)", "CorrID"}, `unknown time unit "fortnights"`},
		{[]string{"Name", "Start (ns)", "Duration (ns)", "CorrID", "Start (ns)"}, "has the column twice (columns 2 and 5)"},
	} {
		_, err := Resolve("x.csv", "cuda_api_trace", c.header, nsysdb.APITraceColumns)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.header, err, c.want)
		}
	}
}
