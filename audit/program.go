package audit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// BytesTolerance is how far the bytes moved in either direction between
// host and device may differ between two captures of one program, as a
// share of all the bytes the busier of the two moved between host and
// device: a direction that carries little (the parameters one rank of a
// data-parallel job sends the others once) may change by more than that
// share of itself and still cost the program next to nothing.
const BytesTolerance = 0.01

// KernelTolerance is the largest share of a capture's kernel launches
// that the other capture did not match, name for name (launches of a name
// past the other's count of it, names it never launched included), for
// two captures of one program (a library may pick another kernel now and
// then).
const KernelTolerance = 0.01

// maxNamed bounds the kernel names a Difference lists.
const maxNamed = 3

// Difference is one way two captures are not of the same program.
type Difference struct {
	// What differs: DiffBytes for a copy direction's bytes (Direction
	// says which), DiffKernels for the kernels launched.
	What      string
	Direction vocab.CopyKind
	// Before and After are the bytes moved, or for kernels the launches
	// the other capture did not match name for name (of a name it never
	// launched, or past its count of the name); Share the change (the
	// bytes' relative change, or the larger share of launches).
	Before int64
	After  int64
	Share  float64
	// Moved is, for bytes, what BytesTolerance is a share of: the bytes
	// the busier capture moved between host and device, both directions
	// (0 in a difference written before it was kept).
	Moved int64
	// OnlyBefore and OnlyAfter name (at most maxNamed of, the most
	// launched first) the kernels one capture launched and the other did
	// not; NamesBefore and NamesAfter count them all.
	OnlyBefore  []string
	OnlyAfter   []string
	NamesBefore int
	NamesAfter  int
}

// What differs between two programs.
const (
	DiffBytes   = "bytes"
	DiffKernels = "kernels"
)

// NotSameProgram refuses a check of two captures that are not of one
// program: a fix does not change the bytes a program moves or the kernels
// it runs.
type NotSameProgram struct {
	Before, After string
	Differences   []Difference
}

// Error names what differs and what to do.
func (e *NotSameProgram) Error() string {
	return fmt.Sprintf("%s and %s are not captures of the same program, so the one cannot check a prediction made from the other: %s; give a capture of the same program before and after its fix (or one capture alone to audit it)",
		e.Before, e.After, DifferenceWords(e.Differences, "before", "after"))
}

// DifferenceWords says what differs between two captures, the first
// called one and the second other ("before" and "after").
func DifferenceWords(ds []Difference, one, other string) string {
	var parts []string
	for _, d := range ds {
		switch d.What {
		case DiffBytes:
			if d.Moved <= 0 {
				parts = append(parts, fmt.Sprintf("%s bytes: %s %s, %s %s (%s, more than %.0f%%)",
					d.Direction, mb(d.Before), one, mb(d.After), other, pctPast(d.Share, BytesTolerance, true), 100*BytesTolerance))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s bytes: %s %s, %s %s (%s; the %s between them is %s of the %s moved between host and device, more than %.0f%%)",
				d.Direction, mb(d.Before), one, mb(d.After), other, relativeChange(d, one), mb(abs(d.After-d.Before)),
				pctPast(float64(abs(d.After-d.Before))/float64(d.Moved), BytesTolerance, false), mb(d.Moved), 100*BytesTolerance))
		case DiffKernels:
			s := fmt.Sprintf("kernels: %s %s and %d %s that the other capture did not launch as often, name for name (%s, more than %.0f%%)",
				launches(d.Before), one, d.After, other, pctPast(d.Share, KernelTolerance, false), 100*KernelTolerance)
			s += namesOnly(one, d.OnlyBefore, d.NamesBefore) + namesOnly(other, d.OnlyAfter, d.NamesAfter)
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// launches counts kernel launches in words.
func launches(n int64) string {
	if n == 1 {
		return "1 launch"
	}
	return fmt.Sprintf("%d launches", n)
}

// pctPast writes a share that lies past a tolerance as a percentage with
// one decimal, or as many more (up to four) as it takes not to read as
// the tolerance itself ("1.0%, more than 1%"); signed with a sign.
func pctPast(share, tol float64, signed bool) string {
	f := "%.*f%%"
	if signed {
		f = "%+.*f%%"
	}
	d := 1
	for ; d < 4; d++ {
		p := math.Pow(10, float64(d))
		if math.Round(math.Abs(100*share)*p) != math.Round(100*tol*p) {
			break
		}
	}
	return fmt.Sprintf(f, d, 100*share)
}

// SameProgram returns a *NotSameProgram error when before and after moved
// different bytes host-to-device or device-to-host (by more than
// BytesTolerance of all they moved) or ran different kernels (launches
// the other did not match name for name above KernelTolerance of
// either's), nil when they are alike.
func SameProgram(before, after *Audit) error {
	e := &NotSameProgram{Before: before.Capture, After: after.Capture}
	dirs := []vocab.CopyKind{vocab.CopyHtoD, vocab.CopyDtoH}
	var b, a [2]int64
	for i, dir := range dirs {
		b[i], a[i] = before.Sum(dir, "", "").Bytes, after.Sum(dir, "", "").Bytes
	}
	moved := max(b[0]+b[1], a[0]+a[1])
	for i, dir := range dirs {
		if b[i] == a[i] {
			continue
		}
		change := math.Inf(1)
		if b[i] > 0 {
			change = float64(a[i]-b[i]) / float64(b[i])
		}
		if float64(abs(a[i]-b[i])) > BytesTolerance*float64(moved) {
			e.Differences = append(e.Differences, Difference{What: DiffBytes, Direction: dir, Before: b[i], After: a[i], Share: change, Moved: moved})
		}
	}
	// An audit read back from its JSON carries no kernel counts (nil):
	// then the bytes alone tell.
	ob, db, nb, tb := only(before.kernels, after.kernels)
	oa, da, na, ta := only(after.kernels, before.kernels)
	share := max(ratio(nb, tb), ratio(na, ta))
	if share > KernelTolerance && before.kernels != nil && after.kernels != nil {
		e.Differences = append(e.Differences, Difference{What: DiffKernels, Before: nb, After: na, Share: share,
			OnlyBefore: ob, OnlyAfter: oa, NamesBefore: db, NamesAfter: da})
	}
	if len(e.Differences) == 0 {
		return nil
	}
	return e
}

// only lists (at most maxNamed, the most launched first) the kernels of
// have that other never launched and how many names they are; it counts
// the launches of have that other does not match name for name (every
// launch of a name other never launched, and those of a name past
// other's count of it), and have's launches in all.
func only(have, other map[string]int64) (names []string, distinct int, launches, total int64) {
	type named struct {
		name string
		n    int64
	}
	var miss []named
	for k, n := range have {
		total += n
		launches += max(0, n-other[k])
		if other[k] == 0 {
			miss = append(miss, named{k, n})
		}
	}
	slices.SortFunc(miss, func(x, y named) int { return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.name, y.name)) })
	for _, m := range miss[:min(len(miss), maxNamed)] {
		names = append(names, m.name)
	}
	return names, len(miss), launches, total
}

// namesOnly lists the kernels only one side ran, with how many more.
func namesOnly(side string, names []string, all int) string {
	if all == 0 {
		return ""
	}
	s := "; only " + side + ": " + strings.Join(names, ", ")
	if more := all - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func ratio(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

// relativeChange writes a difference's relative change with one decimal
// and its sign, or says that the first capture (one) moved none.
func relativeChange(d Difference, one string) string {
	if d.Before == 0 {
		return "none " + one
	}
	return fmt.Sprintf("%+.1f%%", 100*d.Share)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// mb is bytes as MB (1e6 bytes), for the refusal's words; under 0.1 MB as
// bytes.
func mb(b int64) string {
	if b < 50_000 {
		return fmt.Sprintf("%d bytes", b) // under 0.1 MB: "0.0 MB" would hide it
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}
