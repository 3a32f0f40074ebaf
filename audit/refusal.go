package audit

import (
	"errors"
	"slices"

	"github.com/nsyscheck/nsyscheck/diag"
)

// Refusal is an audit that refused its input (the reader's error it
// wraps), with what the capture said of itself before the refusal (nsys's
// diagnostics, what it could not show: audit --format json writes them)
// and, where the trace holds no copy record, those of them that may hide
// copies (nsys lost its events, did not trace CUDA, traced graphs whole):
// typed, so that report words them and --expect compares their codes.
type Refusal struct {
	// Err is the reader's refusal.
	Err error
	// Diagnostics are what the capture said of itself.
	Diagnostics []diag.Diagnostic
	// Limits are the diagnostics that may hide copies, where the trace
	// holds no copy record.
	Limits []diag.Diagnostic
}

// Error is the reader's refusal; the limits are worded by report.
func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap is the reader's refusal.
func (r *Refusal) Unwrap() error { return r.Err }

// Codes are the codes of the limits the refusal carries.
func (r *Refusal) Codes() []diag.Code {
	out := make([]diag.Code, len(r.Limits))
	for i, d := range r.Limits {
		out[i] = d.Code()
	}
	return out
}

// refusalCodes are the codes a refusal names, none where err is no Refusal.
func refusalCodes(err error) []diag.Code {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Codes()
	}
	return nil
}

// namesCode says whether the refusal err names the code c.
func namesCode(err error, c string) bool {
	return slices.Contains(refusalCodes(err), diag.Code(c))
}
