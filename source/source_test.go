package source

import (
	"testing"
)

func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"ref.sqlite": "ref", "pinned.nsyscheck.sqlite": "pinned", "ref_cuda_api_sum.csv": "ref",
		"x.nsys-rep": "x", "pinned.results.json": "pinned", "ref.transcript.txt": "ref",
	} {
		if got := Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
}
