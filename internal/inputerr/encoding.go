package inputerr

import (
	"bufio"
	"bytes"
	"fmt"
)

// EncodingError is a read of a text input whose first bytes show it was
// saved as UTF-16 or UTF-32, not the UTF-8 that nsys and the program write
// (a Windows editor, or PowerShell's > redirect, saves UTF-16): read as
// UTF-8 its every other byte is zero, and it would be misread as garbage
// or as holding nothing. A reader returns it as it meets the file's
// start, for its caller to name the file (NotUTF8).
type EncodingError struct {
	Encoding string // "UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"
	BOM      bool   // the file starts with the encoding's byte-order mark
}

func (e *EncodingError) Error() string {
	bom := "without a byte-order mark"
	if e.BOM {
		bom = "with a byte-order mark"
	}
	return fmt.Sprintf("the file is %s text (%s), not UTF-8", e.Encoding, bom)
}

// TextEncoding tells, from a text file's first bytes, whether it is UTF-16
// or UTF-32 rather than UTF-8 (with or without a UTF-8 byte-order mark):
// by its byte-order mark, else, for UTF-16, by the zero byte beside each
// of its first characters, which text in UTF-8 never holds. nil for
// UTF-8, or where head is too short to tell.
func TextEncoding(head []byte) *EncodingError {
	switch {
	case len(head) >= 4 && head[0] == 0xFF && head[1] == 0xFE && head[2] == 0 && head[3] == 0:
		return &EncodingError{Encoding: "UTF-32LE", BOM: true}
	case len(head) >= 4 && head[0] == 0 && head[1] == 0 && head[2] == 0xFE && head[3] == 0xFF:
		return &EncodingError{Encoding: "UTF-32BE", BOM: true}
	case len(head) >= 2 && head[0] == 0xFF && head[1] == 0xFE:
		return &EncodingError{Encoding: "UTF-16LE", BOM: true}
	case len(head) >= 2 && head[0] == 0xFE && head[1] == 0xFF:
		return &EncodingError{Encoding: "UTF-16BE", BOM: true}
	}
	// Without a mark: the first characters (up to 32), each an ASCII
	// byte beside a zero one.
	n := min(len(head), 64) &^ 1
	if n < 4 {
		return nil
	}
	le, be := true, true
	for i := 0; i < n; i += 2 {
		a, b := head[i], head[i+1]
		le = le && a != 0 && a < 0x80 && b == 0
		be = be && b != 0 && b < 0x80 && a == 0
	}
	switch {
	case le:
		return &EncodingError{Encoding: "UTF-16LE"}
	case be:
		return &EncodingError{Encoding: "UTF-16BE"}
	}
	return nil
}

// NotUTF8 is the error of the text input at path whose encoding e is not
// UTF-8; remake says how to make the file again ("make the report again
// with nsys stats --format csv").
func NotUTF8(path string, e *EncodingError, remake string) *Error {
	return &Error{Path: path, Problem: e.Error() + ", which nsys and the program write: saved again by an editor or a PowerShell > redirect?",
		Hint: "save it as UTF-8 (iconv -f " + e.Encoding + " -t UTF-8 FILE > NEW), or " + remake}
}

// StartText reads the start of a text input through br: the encoding of
// one saved as UTF-16 or UTF-32 (TextEncoding of its first bytes), not
// to be read on; else nil, a leading UTF-8 byte-order mark (an editor's)
// skipped, which is no part of the first line.
func StartText(br *bufio.Reader) *EncodingError {
	head, _ := br.Peek(64)
	if e := TextEncoding(head); e != nil {
		return e
	}
	if bytes.HasPrefix(head, []byte("\xEF\xBB\xBF")) {
		_, _ = br.Discard(3)
	}
	return nil
}
