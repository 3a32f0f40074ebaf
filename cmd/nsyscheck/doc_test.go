package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/exportcache"
)

// docsWithExamples are the documents whose console examples must run as
// shown, each at the width its examples were laid out at.
var docsWithExamples = []struct {
	name    string
	columns int
}{{"README.md", 100}, {"docs/guide.md", 100}, {"docs/audit.md", 80}}

// commandPrefixes are the ways an example runs nsyscheck: installed, or
// from the checkout with go run (the same program, which the test runs
// through Main).
var commandPrefixes = [][]string{{"nsyscheck"}, {"go", "run", "./cmd/nsyscheck"}}

// nsyscheckArgs are the arguments an example's command gives nsyscheck, or
// false where it does not run nsyscheck.
func nsyscheckArgs(fields []string) ([]string, bool) {
	for _, p := range commandPrefixes {
		if len(fields) >= len(p) && strings.Join(fields[:len(p)], " ") == strings.Join(p, " ") {
			return fields[len(p):], true
		}
	}
	return nil, false
}

// example is one command of a ```console block: "$ nsyscheck ARGS", the
// output printed after it, and the exit status ("[exit status N]" as the
// block's last line; 0 when absent).
type example struct {
	line   int
	args   []string
	want   []string
	status int
}

var exitLine = regexp.MustCompile(`^\[exit status (\d+)\]$`)

// parseExamples reads the ```console blocks of a Markdown document.
func parseExamples(t *testing.T, doc string) []example {
	var out []example
	in := false
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```console":
			in = true
		case in && strings.TrimSpace(line) == "```":
			in = false
		case in && strings.HasPrefix(line, "$ "):
			fields, err := splitCommand(strings.TrimPrefix(line, "$ "))
			args, ok := nsyscheckArgs(fields)
			if err != nil || !ok {
				t.Fatalf("line %d: %q: want $ nsyscheck ARGS or $ go run ./cmd/nsyscheck ARGS (%v)", i+1, line, err)
			}
			out = append(out, example{line: i + 1, args: args})
		case in && len(out) > 0:
			ex := &out[len(out)-1]
			if m := exitLine.FindStringSubmatch(line); m != nil {
				ex.status, _ = strconv.Atoi(m[1])
				continue
			}
			ex.want = append(ex.want, strings.TrimRight(line, " "))
		case in:
			t.Fatalf("line %d: output before any command", i+1)
		}
	}
	return out
}

// splitCommand splits a command line at spaces, honouring single quotes.
func splitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unclosed quote")
	}
	if any {
		out = append(out, cur.String())
	}
	return out, nil
}

// matchOutput checks got against want line by line; a "..." line in want
// stands for any number of lines.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchOutput(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && got[0] == want[0] && matchOutput(want[1:], got[1:])
}

// TestDocExamples runs every console example of the user documentation, in
// order, in a folder that holds the repository's testdata, and checks that
// each prints what the document shows and exits with the status it shows.
func TestDocExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// The examples show a machine without nsys; where one is installed
	// under /opt/nvidia anyway, those reading a .nsys-rep are skipped.
	t.Setenv("PATH", t.TempDir())
	t.Setenv("NSYS", "")
	_, noNsys := exportcache.FindNsys("", nil)
	for _, d := range docsWithExamples {
		name := d.name
		t.Run(name, func(t *testing.T) {
			t.Setenv("COLUMNS", strconv.Itoa(d.columns))
			doc, err := os.ReadFile(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			examples := parseExamples(t, string(doc))
			if len(examples) == 0 {
				t.Fatalf("%s has no console examples", name)
			}
			work := t.TempDir()
			if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(work, "testdata")); err != nil {
				t.Fatal(err)
			}
			t.Chdir(work)
			for _, ex := range examples {
				if noNsys == nil && strings.Contains(strings.Join(ex.args, " "), ".nsys-rep") {
					t.Logf("%s:%d: skipped: an nsys is installed, and the example shows a machine without one", name, ex.line)
					continue
				}
				var out bytes.Buffer
				status := Main(ex.args, Streams{In: strings.NewReader(""), Out: &out, Err: &out})
				got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
				for i := range got {
					got[i] = strings.TrimRight(got[i], " ")
				}
				if out.Len() == 0 {
					got = nil
				}
				if status != ex.status {
					t.Errorf("%s:%d: nsyscheck %s exited %d, the document says %d\n%s", name, ex.line, strings.Join(ex.args, " "), status, ex.status, out.String())
				}
				if !matchOutput(ex.want, got) {
					t.Errorf("%s:%d: nsyscheck %s printed\n%s\nthe document shows\n%s", name, ex.line, strings.Join(ex.args, " "), out.String(), strings.Join(ex.want, "\n"))
				}
			}
		})
	}
}

func TestMatchOutput(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "...", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "b", "c"}, false},
		{[]string{"a", "b"}, []string{"a", "b", "c"}, false},
		{[]string{"..."}, nil, true},
		{[]string{"x"}, []string{"y"}, false},
	} {
		if got := matchOutput(tc.want, tc.got); got != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
