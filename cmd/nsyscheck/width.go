package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/textwrap"
	"github.com/nsyscheck/nsyscheck/report"
)

// textWidth is the width text output wraps at: env's COLUMNS when set to a
// number, else the terminal's width when w is one, else report.DefaultWidth
// (output piped or redirected).
func textWidth(w io.Writer, env environ.Env) int {
	if c, err := strconv.Atoi(strings.TrimSpace(env.Get("COLUMNS"))); err == nil && c > 0 {
		return c
	}
	// Everything printed goes through the mask and the escaping of control
	// characters; the terminal is below.
	if f, ok := underlying(w).(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return report.DefaultWidth
}

// messages gives a command whose standard output is messages for a person
// (what was written where) that output wrapped line by line at its width,
// as stderr always is, and the function that writes a last unfinished line.
func messages(s Streams) (Streams, func()) {
	w := &textwrap.Writer{W: s.Out, Width: textWidth(s.Out, s.Env), Hang: 4}
	s.Out = w
	return s, func() { _ = w.Flush() }
}
