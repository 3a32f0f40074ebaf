package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/report"
)

// ownJSONHead is how much of a .json input is read to tell verify's own
// output from a capture: its envelope names its kind and inputs first.
const ownJSONHead = 64 << 10

// verifyOutputOf reads the head of a .json input and reports whether it is
// verify's own JSON output (the envelope of kind "verify"), with the inputs
// it names; a file that is not, or cannot be read, is left to the loader.
func verifyOutputOf(path string) (inputs []string, ok bool) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return nil, false
	}
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, ownJSONHead))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return inputs, ok
		}
		switch key {
		case "kind":
			var kind string
			if dec.Decode(&kind) != nil || kind != report.KindVerify {
				return nil, false
			}
			ok = true
		case "inputs":
			if dec.Decode(&inputs) != nil {
				inputs = nil
			}
			return inputs, ok
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return inputs, ok
			}
		}
	}
	return inputs, ok
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
