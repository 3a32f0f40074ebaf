package audit

import (
	"fmt"
)

// The audit's own sentences (NVIDIA's rule's summary, the refusal of two
// programs) and the reports format times and sizes alike.

// FormatNs formats nanoseconds as ms (or µs below a millisecond).
func FormatNs(v float64) string {
	switch {
	case v >= 1e6 || v <= -1e6:
		return fmt.Sprintf("%.1f ms", v/1e6)
	case v >= 1e3 || v <= -1e3:
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
	return fmt.Sprintf("%.0f ns", v)
}

// FormatMB formats bytes as MB (1e6 bytes).
func FormatMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
