package main

import (
	"bytes"
	"testing"

	"github.com/nsyscheck/nsyscheck/report"
)

func TestTextWidth(t *testing.T) {
	t.Setenv("COLUMNS", "72")
	if got := textWidth(&bytes.Buffer{}); got != 72 {
		t.Errorf("COLUMNS=72: width %d", got)
	}
	for _, v := range []string{"", "wide", "-5", "0"} {
		t.Setenv("COLUMNS", v)
		if got := textWidth(&bytes.Buffer{}); got != report.DefaultWidth {
			t.Errorf("COLUMNS=%q, not a terminal: width %d, want %d", v, got, report.DefaultWidth)
		}
	}
}
