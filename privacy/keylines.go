package privacy

import (
	"strconv"
	"strings"
)

// A private key can be stored a line a string: a program that logs a key
// file line by line as NVTX ranges, or a table of a log's lines, holds the
// BEGIN line in one row and the key's base64 lines in the rows after it.
// FindSecrets sees each string alone, and finds the BEGIN line only; a
// keyTail reads the strings after it in the same column, so that scrub
// removes the key's lines too.

// keyLineMin is how long the lines of a key's body must be to be taken as
// the key's where its END line is missing: PEM writes them 64 bytes long
// (OpenSSH 70), all but the last of one length; a few words after a lone
// BEGIN line are not.
const keyLineMin = 40

// keyLinesMax bounds how many lines one key may have (a 16384-bit RSA key
// has about 200): past it the strings are not a key's.
const keyLinesMax = 1024

// openKey reports whether s holds a private key's BEGIN line that no END
// line follows, with no body after it in the same string.
func openKey(s string) bool {
	if !strings.Contains(s, "-----BEGIN") {
		return false
	}
	begins := pemBegin.FindAllStringIndex(s, -1)
	if len(begins) == 0 {
		return false
	}
	last := begins[len(begins)-1]
	rest := s[last[1]:]
	return !pemEnd.MatchString(rest) && strings.TrimSpace(strings.ReplaceAll(rest, `\n`, "")) == ""
}

// keyTail gathers the lines of an open key (openKey) from the strings after
// it: base64 lines and an encrypted key's header lines, up to its END line.
type keyTail struct {
	at    int // the index of the key's finding in the report
	lines []string
}

// next takes the string after the last one read and reports whether the
// key may go on past it; ended says the key's END line was read. A string
// holding a BEGIN line starts another key.
func (k *keyTail) next(b []byte) (more, ended bool) {
	s := string(b)
	if pemBegin.MatchString(s) {
		return false, false
	}
	if m := pemEnd.FindStringIndex(s); m != nil {
		if body := strings.TrimSpace(s[:m[0]]); body != "" && keyBody(body) {
			k.lines = append(k.lines, body)
		}
		return false, true
	}
	line := strings.TrimSpace(s)
	if !keyBody(line) || len(k.lines) >= keyLinesMax {
		return false, false
	}
	if line != "" {
		k.lines = append(k.lines, line)
	}
	return true, false
}

// done gives the key's lines to its finding: the header lines and the
// body's lines of one width, the first's, the last shorter where the END
// line follows it; where the END line is missing, only lines of
// keyLineMin bytes or more.
func (k *keyTail) done(r *Report, ended bool) {
	var headers, body []string
	for _, line := range k.lines {
		if keyHeader(line) {
			headers = append(headers, line)
		} else {
			body = append(body, line)
		}
	}
	n := 0
	for n < len(body) && len(body[n]) == len(body[0]) {
		n++
	}
	if ended && n == len(body)-1 && len(body[n]) < len(body[0]) {
		n++
	}
	if n == 0 || !ended && len(body[0]) < keyLineMin {
		return
	}
	f := &r.Findings[k.at]
	f.lines = append(append(f.lines, headers...), body[:n]...)
}

// keyHeader reports whether line is a header line of an encrypted key.
func keyHeader(line string) bool {
	head, _, ok := strings.Cut(line, ": ")
	return ok && (head == "Proc-Type" || head == "DEK-Info" || head == "Comment")
}

// keyBody reports whether s is made of a key's body lines: base64, or the
// header lines of an encrypted key (Proc-Type: 4,ENCRYPTED, DEK-Info: ...).
func keyBody(s string) bool {
	for _, line := range strings.Split(strings.ReplaceAll(s, `\n`, "\n"), "\n") {
		line = strings.TrimSpace(line)
		if keyHeader(line) {
			continue
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; !alnumByte[c] && c != '+' && c != '/' && c != '=' {
				return false
			}
		}
	}
	return true
}

// keyFinding returns the index of the finding of the private key among
// secs, what FindSecrets found in a string holding its BEGIN line, or -1.
func (r *Report) keyFinding(secs []Secret) int {
	for _, sec := range secs {
		if sec.Format != FormatPrivateKey {
			continue
		}
		for i := len(r.Findings) - 1; i >= 0; i-- {
			if f := &r.Findings[i]; f.value == sec.Value && f.Kind == KindSecret {
				return i
			}
		}
	}
	return -1
}

// keyRows says where the lines of a key found after its BEGIN line are.
func keyRows(f *Finding, where string) {
	if len(f.lines) == 0 || !strings.HasPrefix(f.Where, where) {
		return
	}
	f.Where = where + " and " + strconv.Itoa(len(f.lines)) + " strings after it (the key's lines)"
}
