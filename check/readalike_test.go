package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/records"
)

// TestVerifyAndAuditReadAlike: verify and audit read an input through the
// same reader, so they cannot read it differently. A CSV folder with a row
// damaged in a call neither reads for itself (a cudaMalloc of negative
// duration: verify once skipped the rows of the calls it does not read and
// gave verdicts, audit read every row and refused) is refused by both with
// the same error. The CSV folder without a GPU trace (h200-lesson-set) is
// read by both and both say why it has no copies in the same words: verify
// answers from the program's numbers and the summaries, audit, without a
// copy record, is unavailable. For the PyTorch capture as an export and as
// CSV reports, the audit's calls and copies are the model's.
func TestVerifyAndAuditReadAlike(t *testing.T) {
	captures := filepath.Join("..", "testdata", "captures")
	damaged := t.TempDir()
	shipped, _ := filepath.Glob(filepath.Join(captures, "h200-pinned", "*.csv"))
	for _, p := range shipped {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, "_cuda_api_trace.csv") {
			b = regexp.MustCompile(`(?m)^(\d+),\d+,(cudaMalloc(_v\d+)?,)`).ReplaceAll(b, []byte("$1,-5,$2"))
			if !bytes.Contains(b, []byte(",-5,cudaMalloc")) {
				t.Fatal("no cudaMalloc row to damage")
			}
		}
		if err := os.WriteFile(filepath.Join(damaged, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, verr := Load(damaged, Options{})
	_, aerr := AuditCapture(context.Background(), damaged, &audit.Rates{LinkGBps: DefaultLinkGBps}, AuditOptions{NoRule: true})
	if verr == nil || aerr == nil || verr.Error() != aerr.Error() || !strings.Contains(verr.Error(), "pinned_cuda_api_trace.csv: data row") {
		t.Errorf("a damaged cudaMalloc row:\nverify: %v\naudit:  %v", verr, aerr)
	}

	lessonSet := filepath.Join(captures, "h200-lesson-set")
	k, err := Load(lessonSet, Options{})
	if err != nil || len(k.Result.Predictions) == 0 {
		t.Fatalf("verify %s: %v", lessonSet, err)
	}
	_, err = AuditCapture(context.Background(), lessonSet, &audit.Rates{LinkGBps: DefaultLinkGBps}, AuditOptions{NoRule: true})
	if why := k.Capture.Why(records.FactMemcpy); err == nil || why == "" || !strings.Contains(err.Error(), "the audit is unavailable") || !strings.Contains(err.Error(), why) {
		t.Errorf("audit %s: %v; want it unavailable because %q, as verify says", lessonSet, err, why)
	}

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
	for _, in := range []string{filepath.Join(captures, "train-pinned", "train-pinned.sqlite"), csv} {
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
		if au.APICalls != int64(len(c.Calls)) || au.Copies != int64(c.Memcpys.Len()) || au.Format != string(c.Format) {
			t.Errorf("%s: audit %d calls, %d copies (%s); the model %d calls, %d copies (%s)",
				in, au.APICalls, au.Copies, au.Format, len(c.Calls), c.Memcpys.Len(), c.Format)
		}
	}
}
