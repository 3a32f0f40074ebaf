package main

import (
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/source"
)

// verifyOutputOf reports whether a .json input is verify's own JSON output
// (source.OwnOutput: the envelope of kind "verify"), with the inputs it
// names; a file that is not, or cannot be read, is left to the loader.
func verifyOutputOf(path string) (inputs []string, ok bool) {
	out, ok := source.OwnOutput(path)
	if !ok || out.Kind != source.OutputVerify {
		return nil, false
	}
	return out.Inputs, true
}

// refuseOwnOutput refuses an input that is verify's own JSON output,
// saying what it is and what to give instead: the inputs it was made from,
// in the command asked for (command is "nsyscheck report%s -o DIR", the
// inputs put in for %s; the capture shipped inside nsyscheck is given by
// naming none).
func refuseOwnOutput(paths []string, command string) error {
	for _, p := range paths {
		inputs, ok := verifyOutputOf(p)
		if !ok {
			continue
		}
		instead := "the capture it was made from"
		if len(inputs) > 0 {
			var args strings.Builder
			for _, in := range inputs {
				if !strings.HasPrefix(in, shippedPrefix) {
					args.WriteString(" " + in)
				}
			}
			noun := "capture"
			if len(inputs) > 1 {
				noun = "captures"
			}
			instead = fmt.Sprintf("the %s it was made from: %s", noun, fmt.Sprintf(command, args.String()))
		}
		return &statusError{code: exitError, err: fmt.Errorf("%s: this is verify's own JSON output (kind %q), not a capture; give %s",
			p, report.KindVerify, instead)}
	}
	return nil
}
