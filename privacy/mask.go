package privacy

import (
	"io"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/strcache"
	"github.com/nsyscheck/nsyscheck/records"
)

// MaskCapture masks, in place, every credential in the strings a loaded
// capture carries (API, kernel, range and thread names, metadata, the
// program's own text, the reasons facts are missing), so that nothing
// derived from it — verdicts, evidence, reports, plots — shows one.
func MaskCapture(c *capture.Capture) {
	if c == nil {
		return
	}
	m := func(s *string) { *s = MaskSecrets(*s) }
	// Names repeat from record to record: each distinct one is looked at
	// once (CopyMasker's memo), the last of each field kept at hand.
	var names CopyMasker
	for i := range c.Calls {
		c.Calls[i].Name = names.mask(slotCallName, c.Calls[i].Name)
		c.Calls[i].Thread = names.mask(slotCallThread, c.Calls[i].Thread)
	}
	for i := range c.Kernels {
		c.Kernels[i].Name = names.mask(slotOpName, c.Kernels[i].Name)
	}
	for i := range c.Ranges {
		c.Ranges[i].Name = names.mask(slotRangeName, c.Ranges[i].Name)
		m(&c.Ranges[i].Domain)
	}
	for i := range c.APISummary {
		m(&c.APISummary[i].Name)
	}
	for i := range c.RangeSummary {
		m(&c.RangeSummary[i].Name)
		m(&c.RangeSummary[i].Domain)
	}
	for i := range c.Missing {
		m(&c.Missing[i].Reason)
	}
	for _, s := range []*string{&c.Meta.NsysVersion, &c.Meta.SchemaVersion, &c.Meta.GPU, &c.Meta.Driver,
		&c.Meta.CUDADriver, &c.Meta.OS} {
		m(s)
	}
	if p := c.Program; p != nil {
		for _, s := range []*string{&p.Source, &p.GPU, &p.Driver, &p.CUDA} {
			m(s)
		}
		for i := range p.Gates {
			m(&p.Gates[i].Name)
			m(&p.Gates[i].Detail)
		}
	}
}

// CopyMasker masks the names the audit's records carry (each call's API
// and thread, a copy's call's, a kernel's name, the NVTX ranges), so that
// no class key, region, finding, framework clue or report derived from
// them shows a credential.
// Names repeat from copy to copy: each distinct one is looked at once (up
// to maskMemo of them).
type CopyMasker struct {
	memo map[string]string
	// recent is, per field masked (see the slot constants), the names
	// given lately and their masks, found without hashing.
	recent [slots]strcache.Cache[string]
}

// The fields a CopyMasker masks, each with its own recent names.
const (
	slotCallName = iota
	slotCallThread
	slotOpName
	slotRangeName
	slots
)

// maskMemo bounds how many distinct names a CopyMasker remembers.
const maskMemo = 4096

// Handler returns h behind the masker: the names of each call, each
// copy's call, each kernel and each NVTX range are masked in place before
// h sees them.
func (m *CopyMasker) Handler(h records.Handler) records.Handler {
	if next := h.Call; next != nil {
		h.Call = func(c *records.Call) error {
			c.Name, c.Thread = m.mask(slotCallName, c.Name), m.mask(slotCallThread, c.Thread)
			return next(c)
		}
	}
	if next := h.Range; next != nil {
		h.Range = func(r *records.Range) error {
			r.Name = m.mask(slotRangeName, r.Name)
			return next(r)
		}
	}
	if next := h.Op; next != nil {
		h.Op = func(o *records.Op) error {
			if c := o.Call; c != nil {
				c.Name, c.Thread = m.mask(slotCallName, c.Name), m.mask(slotCallThread, c.Thread)
			}
			o.Name = m.mask(slotOpName, o.Name)
			return next(o)
		}
	}
	return h
}

func (m *CopyMasker) mask(slot int, s string) string {
	if s == "" {
		return s
	}
	recent := &m.recent[slot]
	if v, ok := recent.Get(s); ok {
		return v
	}
	v, ok := m.memo[s]
	if !ok {
		v = MaskSecrets(s)
		if m.memo == nil || len(m.memo) >= maskMemo {
			m.memo = map[string]string{}
		}
		m.memo[s] = v
	}
	recent.Put(s, v)
	return v
}

// MaskWriter passes what is written to w through MaskSecrets, one Write at
// a time: a program that prints whole lines or documents per call never
// prints a credential unmasked.
type MaskWriter struct{ W io.Writer }

// Unwrap returns the writer below.
func (m MaskWriter) Unwrap() io.Writer { return m.W }

// Write masks p and writes it; it reports len(p) written on success.
func (m MaskWriter) Write(p []byte) (int, error) {
	s := string(p)
	masked := MaskSecrets(s)
	if _, err := io.WriteString(m.W, masked); err != nil {
		return 0, err
	}
	return len(p), nil
}
