package check

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
)

// TestVerifyAndAuditReadAlike: verify and audit read an input through the
// same reader, so they cannot read it differently. The CSV folder without
// a GPU trace (h200-lesson-set), which verify answers and audit once
// refused, is read by both, and both say why it has no copies in the same
// words; for the PyTorch capture as an export and as CSV reports, the
// audit's calls and copies are the model's.
func TestVerifyAndAuditReadAlike(t *testing.T) {
	captures := filepath.Join("..", "testdata", "captures")
	csv := t.TempDir()
	for _, r := range []string{"cuda_api_trace", "cuda_gpu_trace", "nvtx_pushpop_trace"} {
		b, err := os.ReadFile(filepath.Join(captures, "train-pinned", "train-pinned_"+r+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(csv, "train_"+r+".csv"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []string{filepath.Join(captures, "h200-lesson-set"), filepath.Join(captures, "train-pinned", "train-pinned.sqlite"), csv} {
		k, err := Load(in, Options{})
		if err != nil {
			t.Fatalf("verify %s: %v", in, err)
		}
		if k.Result == nil || len(k.Result.Predictions) == 0 {
			t.Fatalf("verify %s: no predictions", in)
		}
		au, err := AuditCapture(context.Background(), in, &audit.Rates{LinkGBps: DefaultLinkGBps}, AuditOptions{NoRule: true})
		if err != nil {
			t.Fatalf("audit %s: %v", in, err)
		}
		// The model of every call and copy, as the audit reads them.
		c, err := capture.Load(in, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if au.APICalls != int64(len(c.Calls)) || au.Copies != int64(len(c.Memcpys)) || au.Format != string(c.Format) {
			t.Errorf("%s: audit %d calls, %d copies (%s); the model %d calls, %d copies (%s)",
				in, au.APICalls, au.Copies, au.Format, len(c.Calls), len(c.Memcpys), c.Format)
		}
		var why string
		for _, g := range au.Missing {
			if g.Fact == capture.FactMemcpy {
				why = g.Reason
			}
		}
		if why != k.Capture.Why(capture.FactMemcpy) {
			t.Errorf("%s: the audit says the copies are missing because %q, verify because %q", in, why, k.Capture.Why(capture.FactMemcpy))
		}
	}
}
