package nsysdb

import (
	"regexp"
	"strconv"
	"strings"
)

// What nsys writes about its own capture in DIAGNOSTIC_EVENT, as far as
// nsyscheck reads it: the messages that say events were lost, that none
// were collected, how many were, and that importing the raw events failed
// (nsys 2025.3's texts).

// DiagKind says what one of nsys's diagnostic messages reports.
type DiagKind uint8

// Kinds of nsys diagnostic message.
const (
	DiagOther      DiagKind = iota
	DiagNotAll              // "Not all CUDA events might have been collected."
	DiagNone                // "No CUDA events collected. Does the process use CUDA?"
	DiagCollected           // "Number of CUDA events collected: 445."
	DiagProcessing          // "Error when processing events: ..." (the import's error)
	DiagDropped             // a message that says events or records were lost or dropped
)

// Event families nsys names in its diagnostics ("Not all NVTX events ...").
const (
	EventsCUDA = "CUDA"
	EventsNVTX = "NVTX"
)

// CUDAEventTables are the tables whose rows nsys counts in "Number of CUDA
// events collected": each CUDA event it collects is written as an API call
// (the runtime table, its rows of call stacks aside), a kernel, a memory
// copy or a memset.
var CUDAEventTables = []string{TableRuntime, TableKernel, TableMemcpy, TableMemset}

var (
	notAllRe    = regexp.MustCompile(`(?i)^\s*not all (\S+) events might have been collected`)
	noneRe      = regexp.MustCompile(`(?i)^\s*no (\S+) events collected`)
	collectedRe = regexp.MustCompile(`(?i)^\s*number of (\S+) events collected:\s*([^\s.]*)`)
	countRe     = regexp.MustCompile(`^\d+$`)
	droppedRe   = regexp.MustCompile(`(?i)\b(lost|dropped|discarded|overflow(ed)?)\b`)
)

// processingPrefix starts the message nsys writes when it failed to
// process the raw events of the capture it imports.
const processingPrefix = "error when processing events"

// DiagOf tells what one of nsys's diagnostic texts reports: its kind, the
// event family it names ("CUDA", "NVTX", ...; "" where it names none) and,
// for DiagCollected, the count: -1 where what follows the colon is not a
// count as nsys writes one (digits, then a full stop), or overflows.
func DiagOf(text string) (kind DiagKind, family string, n int64) {
	if m := notAllRe.FindStringSubmatch(text); m != nil {
		return DiagNotAll, m[1], 0
	}
	if m := noneRe.FindStringSubmatch(text); m != nil {
		return DiagNone, m[1], 0
	}
	if m := collectedRe.FindStringSubmatch(text); m != nil {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil || !countRe.MatchString(m[2]) {
			v = -1
		}
		return DiagCollected, m[1], v
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), processingPrefix) {
		return DiagProcessing, "", 0
	}
	if droppedRe.MatchString(text) {
		return DiagDropped, "", 0
	}
	return DiagOther, "", 0
}

// DiagMessage is the part of a diagnostic's text a person reads: its first
// line without the trailing colon nsys puts before the details ("Error
// when processing events: Source ID=" -> "Error when processing events"),
// and, for the import's error, the message nsys puts in its last
// "[...] = " line ("Cannot find string for an exterior index").
func DiagMessage(text string) (head, detail string) {
	t := strings.TrimSpace(text)
	head = t
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		head = strings.TrimSpace(t[:i])
	}
	if i := strings.Index(head, ": "); i >= 0 && strings.HasPrefix(strings.ToLower(head), processingPrefix) {
		head = head[:i]
	}
	head = strings.TrimRight(head, ":.")
	if k := strings.LastIndex(t, "] = "); k >= 0 {
		detail = strings.TrimSpace(t[k+len("] = "):])
		if i := strings.IndexByte(detail, '\n'); i >= 0 {
			detail = strings.TrimSpace(detail[:i])
		}
	}
	return head, detail
}
