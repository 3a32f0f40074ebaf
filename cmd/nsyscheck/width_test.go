package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/report"
)

func TestTextWidth(t *testing.T) {
	t.Setenv("COLUMNS", "72")
	if got := textWidth(&bytes.Buffer{}, nil); got != 72 {
		t.Errorf("COLUMNS=72: width %d", got)
	}
	for _, v := range []string{"", "wide", "-5", "0"} {
		t.Setenv("COLUMNS", v)
		if got := textWidth(&bytes.Buffer{}, nil); got != report.DefaultWidth {
			t.Errorf("COLUMNS=%q, not a terminal: width %d, want %d", v, got, report.DefaultWidth)
		}
	}
	// A command's own environment (Streams.Env) is read, not the process's.
	t.Setenv("COLUMNS", "72")
	if got := textWidth(&bytes.Buffer{}, environ.Env{"COLUMNS=72", "COLUMNS=90"}); got != 90 {
		t.Errorf("Env COLUMNS=90 over the process's 72: width %d", got)
	}
	if got := textWidth(&bytes.Buffer{}, environ.Env{}); got != report.DefaultWidth {
		t.Errorf("an Env without COLUMNS over the process's 72: width %d, want %d", got, report.DefaultWidth)
	}
}

// On a terminal, text takes the terminal's width even though everything
// printed passes through privacy.MaskWriter and ctlchar.Writer on its way
// there.
func TestTextWidthTerminalBehindMask(t *testing.T) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	defer tty.Close()
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 123}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COLUMNS", "")
	if got := textWidth(privacy.MaskWriter{W: &ctlchar.Writer{W: tty}}, nil); got != 123 {
		t.Errorf("a 123-column terminal behind the mask and the escaping: width %d", got)
	}
	if got := textWidth(tty, nil); got != 123 {
		t.Errorf("a 123-column terminal: width %d", got)
	}
}

// splitUnit matches a line break between a number and its unit, or a
// comparison and its bound: "7.6284⏎ms", ">=⏎1.3".
var splitUnit = regexp.MustCompile(`(\d\n\s*(ms|MiB|KiB|GiB|GB/s|MB|GB|x|%|ns|µs|B|bytes)\b|(>=|<=|<|=)\n\s*\d)`)

// checkWidth fails for a line of out wider than width (unless it is one
// unbreakable word, a path) and for a number parted from its unit.
func checkWidth(t *testing.T, what, out string, width int) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(line) > width && strings.Contains(strings.TrimSpace(line), " ") {
			t.Errorf("%s at %d columns: line %d is %d wide: %q", what, width, i+1, utf8.RuneCountInString(line), line)
		}
	}
	if m := splitUnit.FindString(out); m != "" {
		t.Errorf("%s at %d columns: a number parted from its unit: %q", what, width, m)
	}
}

// checkPathsWhole fails where a path under dir is broken across lines:
// each word of out that names a place under dir must exist, or be one of
// the arguments given.
func checkPathsWhole(t *testing.T, what, out, dir string, args []string, width int) {
	t.Helper()
	for _, w := range strings.Fields(out) {
		p := strings.TrimRight(strings.TrimLeft(w, "('\""), ",.;:)'\"")
		if !strings.Contains(p, dir) {
			continue
		}
		p = p[strings.Index(p, dir):]
		if _, err := os.Stat(p); err != nil && !slices.Contains(args, p) {
			t.Errorf("%s at %d columns: %q is no path: one broken across lines?\n%s", what, width, p, out)
		}
	}
}

// TestStreamWidths lays out every stream a person reads at 80 and 200
// columns: verify's text (one capture, several, an application's), help,
// the bare-verify banner and the note of an input read in place of another
// on stderr, and errors, from a long one naming many folders to a flag
// error. Each fits its width, and at 200 columns a message too long for 100
// takes the wider lines.
func TestStreamWidths(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	caps := filepath.Join("..", "..", "testdata", "captures")
	for _, width := range []int{80, 200} {
		env := environ.With(map[string]string{"XDG_CACHE_HOME": cache, "COLUMNS": strconv.Itoa(width)})
		for _, tc := range []struct {
			what   string
			args   []string
			stream string // "out" or "err"
		}{
			{"verify h200-pinned", []string{"verify", filepath.Join(caps, "h200-pinned")}, "out"},
			{"verify broken-pin -v", []string{"verify", "-v", filepath.Join(caps, "broken-pin")}, "out"},
			{"verify side by side", []string{"verify", filepath.Join(caps, "h200-pinned"), filepath.Join(caps, "broken-pin"), filepath.Join(caps, "train-pinned")}, "out"},
			{"verify train-pinned", []string{"verify", filepath.Join(caps, "train-pinned")}, "out"},
			{"verify --reference", []string{"verify", filepath.Join(caps, "broken-pin"), "--reference", filepath.Join(caps, "h200-pinned")}, "out"},
			{"verify --reference an application", []string{"verify", "--reference", filepath.Join(caps, "train-pageable"), filepath.Join(caps, "h200-pinned")}, "out"},
			{"nsyscheck --help", []string{"--help"}, "out"},
			{"verify --help", []string{"verify", "--help"}, "out"},
			{"run --help", []string{"run", "--help"}, "out"},
			{"report --help", []string{"report", "--help"}, "out"},
			{"audit --help", []string{"audit", "--help"}, "out"},
			{"the bare-verify banner", []string{"verify"}, "err"},
			{"the .nsys-rep note", []string{"verify", filepath.Join(caps, "h200-pinned", "pinned.nsys-rep")}, "err"},
			{"a folder of captures", []string{"verify", caps}, "err"},
			{"a missing input", []string{"verify", filepath.Join(caps, "no-such-capture.sqlite")}, "err"},
			{"an unknown flag", []string{"verify", "--no-such-flag"}, "err"},
			{"-v at the root", []string{"-v", "verify"}, "err"},
		} {
			var out, errb bytes.Buffer
			Main(tc.args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Env: env})
			got := out.String()
			if tc.stream == "err" {
				got = errb.String()
			}
			if strings.TrimSpace(got) == "" {
				t.Errorf("%s: nothing on std%s (stdout %q, stderr %q)", tc.what, tc.stream, out.String(), errb.String())
				continue
			}
			checkWidth(t, tc.what, got, width)
			checkPathsWhole(t, tc.what, got, caps, tc.args, width)
			if tc.what == "a folder of captures" {
				wide := false
				for _, l := range strings.Split(got, "\n") {
					wide = wide || utf8.RuneCountInString(l) > 100
				}
				if wide != (width == 200) {
					t.Errorf("%s at %d columns: lines over 100 columns: %v\n%s", tc.what, width, wide, got)
				}
			}
		}
	}
}
