package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/privacy"
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
	if got := textWidth(privacy.MaskWriter{W: &ctlchar.Writer{W: tty}}); got != 123 {
		t.Errorf("a 123-column terminal behind the mask and the escaping: width %d", got)
	}
	if got := textWidth(tty); got != 123 {
		t.Errorf("a 123-column terminal: width %d", got)
	}
}
