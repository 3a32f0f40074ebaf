package main

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/report"
)

// scrubSignalCases: scrub stopped by SIGINT or SIGTERM mid-run exits 130
// and leaves neither its working folder nor the hidden copy beside OUT,
// nor OUT; a later scrub removes what a killed one left behind.
// scrubStepWords say when, in a scrub, a case's signal comes.
var scrubStepWords = map[string]string{"copied": "once its copy is copied", "scrubbed": "once its copy is scrubbed",
	"checking": "while it checks the scrubbed copy"}

func scrubSignalCases() []badCase {
	var out []badCase
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, step := range []string{"copied", "scrubbed", "checking"} {
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			var tmp, dest string
			out = append(out, badCase{group: "interruptions", name: "scrub gets " + name + " " + scrubStepWords[step],
				cmd: "scrub", serial: true,
				make: func(t *testing.T, dir string) []string {
					p := copyShipped(t, dir, "pinned.sqlite")
					tmp, dest = t.TempDir(), filepath.Join(t.TempDir(), "shared.sqlite")
					t.Setenv("TMPDIR", tmp)
					privacy.ScrubStepHook = func(s string) {
						if s == step {
							signalSelf(t, sig)
						}
					}
					t.Cleanup(func() { privacy.ScrubStepHook = nil })
					return []string{p, "-o", dest}
				},
				exit: exitSignal, want: []string{"pinned.sqlite: interrupted: the temporary copies were removed and", "shared.sqlite was not written"},
				check: func(t *testing.T, dir string) {
					assertEmpty(t, tmp)
					assertEmpty(t, filepath.Dir(dest))
				}})
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
		var dest string
		out = append(out, badCase{group: "interruptions", name: "report gets " + name + " while it writes its files",
			cmd: "report", serial: true,
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				dest = filepath.Join(t.TempDir(), "out")
				report.PlaceHook = func([]string) { signalSelf(t, sig) }
				t.Cleanup(func() { report.PlaceHook = nil })
				return []string{p, "-o", dest}
			},
			exit: exitSignal, want: []string{"interrupted: written whole before stopping:", "/out (run report again"},
			check: func(t *testing.T, dir string) {
				// Whole: every file of the report, and no temporary folder.
				entries, err := os.ReadDir(dest)
				if err != nil {
					t.Fatal(err)
				}
				names := map[string]bool{}
				for _, e := range entries {
					names[e.Name()] = true
					if strings.HasPrefix(e.Name(), ".") {
						t.Errorf("left behind: %s", e.Name())
					}
				}
				for _, n := range []string{report.MarkdownFile, report.HTMLFile} {
					if !names[n] {
						t.Errorf("the report lacks %s: %v", n, entries)
					}
				}
				assertOnly(t, filepath.Dir(dest), "out")
			}})
	}
	var tmp, dest string
	out = append(out, badCase{group: "interruptions", name: "scrub where a killed scrub left its working folder and hidden copy",
		cmd: "scrub", serial: true,
		make: func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			tmp, dest = t.TempDir(), filepath.Join(t.TempDir(), "shared.sqlite")
			t.Setenv("TMPDIR", tmp)
			gone := exec.Command("true")
			if err := gone.Run(); err != nil {
				t.Skip(err)
			}
			pid := strconv.Itoa(gone.Process.Pid)
			if err := os.MkdirAll(filepath.Join(tmp, "nsyscheck-scrub-"+pid+"-1", "work.sqlite"), 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(filepath.Dir(dest), ".shared.sqlite.scrub-"+pid+"-1.tmp"), []byte("half"))
			return []string{p, "-o", dest}
		},
		exit: 0, want: []string{"shared.sqlite: removed or redacted"},
		check: func(t *testing.T, dir string) {
			assertEmpty(t, tmp)
			entries, _ := os.ReadDir(filepath.Dir(dest))
			if len(entries) != 1 || entries[0].Name() != "shared.sqlite" {
				t.Errorf("beside the copy: %v, want only shared.sqlite", entries)
			}
		}})
	return out
}

// handlerLag is how long signalSelf gives the command's signal handler,
// once the signal has been handed to every handler of the process, to
// cancel the command's context: one goroutine's wake-up.
const handlerLag = 50 * time.Millisecond

// signalSelf sends sig to the test's own process, where the command's own
// handler catches it (exit 130), and returns once the command has seen it:
// the process hands a signal to all its handlers at once, so once a
// handler of the test's own has it, the command's has it too, and
// handlerLag later it has cancelled the command's context.
func signalSelf(t *testing.T, sig syscall.Signal) {
	t.Helper()
	got := make(chan os.Signal, 1)
	signal.Notify(got, sig)
	defer signal.Stop(got)
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Error(err)
		return
	}
	select {
	case <-got:
		time.Sleep(handlerLag)
	case <-time.After(hangAfter):
		t.Errorf("%s sent to the test's process never arrived", sig)
	}
}

// assertEmpty fails when dir holds anything.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
	}
}

// assertOnly fails when dir holds anything but name.
func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != name {
			t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}
