package predictions

import (
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/records"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// synthOpts shapes a synthetic capture of the bundled program's run.
type synthOpts struct {
	noNVTX      bool           // no NVTX ranges (traced with -t cuda)
	csvLike     bool           // API calls only: no copy, kernel or NVTX records
	asyncPerSrc int            // cudaMemcpyAsync calls per source (default 11)
	pinnedKind  vocab.MemKind  // host memory kind of the "pinned" groups' copies
	openRange   string         // this range is never popped
	crash       bool           // the run ends inside openRange (a part 1 range)
	dropCopies  map[string]int // range name -> copies of each size left out (from the end)
	otherThread bool           // a second thread also makes CUDA calls
	// part 1 times: pageable ms = bytes/pageableRate(i), pinned ms = bytes/pinnedRate
	pageableRate func(i int) float64 // GB/s at size index i
	pinnedRate   float64
	asyncCallMs  map[vocab.MemKind]float64
	asyncSyncMs  map[vocab.MemKind]float64
	kernelMs     map[vocab.Variant]float64
}

type synth struct {
	c        *capture.Capture
	now      int64
	corr     int64
	pid, tid int64
	stack    []int
}

func (s *synth) call(name string, durNs int64) capture.APICall {
	s.corr++
	a := capture.APICall{Name: name, Start: s.now, End: s.now + durNs, CorrelationID: s.corr, PID: s.pid, TID: s.tid}
	s.c.Calls = append(s.c.Calls, a)
	s.now += durNs + 1000
	return a
}

func (s *synth) copy(name string, kind vocab.CopyKind, host vocab.MemKind, bytes, durNs int64) {
	a := s.call(name, durNs)
	src, dst := host, vocab.MemDevice
	if kind == vocab.CopyDtoH {
		src, dst = vocab.MemDevice, host
	}
	s.c.Memcpys.Append(capture.Memcpy{Kind: kind, Src: src, Dst: dst, Bytes: bytes,
		Start: a.Start + 10, End: a.End - 10, CorrelationID: a.CorrelationID, PID: s.pid})
}

func (s *synth) launch(durNs int64) {
	a := s.call(apiLaunchKernel, 5000)
	s.c.Kernels = append(s.c.Kernels, capture.Kernel{Name: kernelName, Start: a.End + 100, End: a.End + 100 + durNs,
		CorrelationID: a.CorrelationID, PID: s.pid})
	s.now = a.End + 200 + durNs
}

func (s *synth) push(name string) {
	s.c.Ranges = append(s.c.Ranges, capture.Range{Name: name, Start: s.now, PID: s.pid, TID: s.tid})
	s.stack = append(s.stack, len(s.c.Ranges)-1)
	s.now += 500
}

func (s *synth) pop(open string) {
	i := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	if s.c.Ranges[i].Name == open {
		s.c.Ranges[i].Open = true
		return
	}
	s.c.Ranges[i].End = s.now
	s.now += 500
}

func msNs(ms float64) int64 { return int64(ms * 1e6) }

// synthCapture builds a capture shaped like a real run of kernels/pinned.cu.
func synthCapture(o synthOpts) *capture.Capture {
	if o.asyncPerSrc == 0 {
		o.asyncPerSrc = asyncPerSrc
	}
	if o.pinnedKind == "" {
		o.pinnedKind = vocab.MemPinned
	}
	if o.pageableRate == nil {
		o.pageableRate = func(i int) float64 { return 10 / (1 + 0.25*float64(i)) }
	}
	if o.pinnedRate == 0 {
		o.pinnedRate = 25
	}
	if o.asyncCallMs == nil {
		o.asyncCallMs = map[vocab.MemKind]float64{"pageable": 9, "pinned": 0.004}
	}
	if o.asyncSyncMs == nil {
		o.asyncSyncMs = map[vocab.MemKind]float64{"pageable": 0.02, "pinned": 1.2}
	}
	if o.kernelMs == nil {
		o.kernelMs = map[vocab.Variant]float64{"device-resident": 0.05, "zero-copy": 4}
	}
	s := &synth{c: &capture.Capture{Path: "synthetic", Format: capture.FormatSQLite,
		Sources: capture.Sources{API: nsysdb.TableRuntime, Memcpy: nsysdb.TableMemcpy, Kernel: nsysdb.TableKernel, NVTX: nsysdb.TableNVTX}},
		now: 1_000_000, pid: 7, tid: 7}
	hostOf := map[vocab.MemKind]vocab.MemKind{"pageable": vocab.MemPageable, "pinned": o.pinnedKind}

	// Correctness gates: full round trips of 256 MiB.
	s.copy(apiMemcpy, vocab.CopyHtoD, vocab.MemPageable, 256*mib, msNs(30))
	s.copy(apiMemcpy, vocab.CopyDtoH, vocab.MemPinned, 256*mib, msNs(5))
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		kind := copyKindOf(dir)
		for _, src := range sources {
			name := string(dir) + "-" + string(src)
			s.push(name)
			for i, b := range sweepSizes {
				rate := o.pinnedRate
				if src == "pageable" {
					rate = o.pageableRate(i)
				}
				ns := int64(float64(b) / rate)
				n := perSize - o.dropCopies[name]
				for k := 0; k < n; k++ {
					s.copy(apiMemcpy, kind, hostOf[src], b, ns)
					if k == warmups-1 {
						s.call("cudaEventRecord", 2000)
					}
				}
			}
			s.pop(o.openRange)
			if o.crash && name == o.openRange {
				return finish(s, o)
			}
		}
	}
	for _, src := range sources {
		for k := 0; k < o.asyncPerSrc; k++ {
			if k == 1 {
				s.push("async-" + string(src))
			}
			s.copy(apiMemcpyAsync, vocab.CopyHtoD, hostOf[src], probeBytes, msNs(o.asyncCallMs[src]))
			s.call(apiStreamSync, msNs(o.asyncSyncMs[src]))
		}
		if o.asyncPerSrc > 1 {
			s.pop(o.openRange)
		}
	}
	for _, v := range variants {
		s.launch(msNs(o.kernelMs[v])) // gate
		s.copy(apiMemcpy, vocab.CopyDtoH, vocab.MemPinned, 64*mib, msNs(1.3))
		s.push("kernel-" + string(v))
		for k := 0; k < warmups+timedRuns; k++ {
			s.launch(msNs(o.kernelMs[v]))
		}
		s.pop(o.openRange)
	}
	return finish(s, o)
}

func finish(s *synth, o synthOpts) *capture.Capture {
	if o.otherThread {
		other := &synth{c: s.c, now: 2_000_000, pid: 7, tid: 8, corr: 1_000_000}
		for k := 0; k < 400; k++ {
			other.copy(apiMemcpy, vocab.CopyHtoD, vocab.MemPageable, 4*mib, 100_000)
		}
	}
	c := s.c
	if o.noNVTX || o.csvLike {
		c.Ranges = nil
		c.Lack(records.FactNVTX, "traced without -t nvtx")
	}
	if o.csvLike {
		c.Format = capture.FormatCSV
		c.Memcpys, c.Kernels = capture.Memcpys{}, nil
		c.Lack(records.FactMemcpy, "CSV reports hold no per-copy activity")
		c.Lack(records.FactMemcpyBytes, "CSV reports give bytes only as totals")
		c.Lack(records.FactMemoryKinds, "no CSV report gives memory kinds")
		c.Lack(records.FactCorrelation, "no CSV report lists GPU activity")
		c.Lack(records.FactKernels, "no per-launch kernel activity")
		for i := range c.Calls {
			c.Calls[i].Row = i + 1
		}
	}
	c.Sort()
	return c
}
