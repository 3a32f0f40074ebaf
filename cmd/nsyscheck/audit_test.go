package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
)

func TestReadRunRates(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "captures", "h200-run")
	r, err := auditRates(&auditOptions{Rates: dir})
	if err != nil {
		t.Fatal(err)
	}
	var h2d, d2h int
	for _, p := range r.Copies {
		switch p.Direction {
		case capture.CopyHtoD:
			h2d++
		case capture.CopyDtoH:
			d2h++
		}
		if p.GBps < 20 || p.GBps > 64 {
			t.Errorf("pinned rate %+v out of the H200's range", p)
		}
	}
	if h2d != 5 || d2h != 5 {
		t.Errorf("%d HtoD and %d DtoH pinned rates, want 5 and 5", h2d, d2h)
	}
	// 256 MiB pinned HtoD: 4.860688 ms in the run's results.
	for _, p := range r.Copies {
		if p.Direction == capture.CopyHtoD && p.Bytes == 268435456 && math.Abs(p.GBps-268435456/4.860688e6) > 1e-9 {
			t.Errorf("256 MiB rate = %g", p.GBps)
		}
	}
	if r.AsyncCallNs <= 0 || r.AsyncCallNs > 1e6 {
		t.Errorf("pinned async call = %g ns", r.AsyncCallNs)
	}
	if math.Abs(r.LinkGBps-63.015) > 0.01 || r.Source != dir {
		t.Errorf("link %g (%s), source %q", r.LinkGBps, r.LinkSource, r.Source)
	}
	// Without a run folder: the assumed link, said to be assumed.
	r, err = auditRates(&auditOptions{})
	if err != nil || len(r.Copies) != 0 || r.LinkGBps != defaultLinkGBps {
		t.Errorf("no run folder: %+v, %v", r, err)
	}
	if r, err = auditRates(&auditOptions{LinkGBps: 31.5}); err != nil || r.LinkGBps != 31.5 || r.LinkSource != "--link-gbps" {
		t.Errorf("--link-gbps: %+v, %v", r, err)
	}
	if _, err := auditRates(&auditOptions{Rates: filepath.Join("..", "..", "testdata", "captures", "train-pinned")}); err == nil {
		t.Error("a capture folder taken for a run folder")
	}
}
