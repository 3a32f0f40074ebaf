package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the nsyscheck command, so the
// scripts in testdata/script run it the way a user does.
func TestMain(m *testing.M) {
	testscript.Main(withShared{m}, map[string]func(){
		"nsyscheck": func() {
			os.Exit(Main(os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
		},
		// A process that writes to an SQLite file without committing,
		// until its stdin closes (SQLite's locks belong to a process).
		"sqlite-writer": func() { os.Exit(sqliteWriter(os.Args[1])) },
	})
}

// withShared runs the tests, then removes the inputs they shared.
type withShared struct{ m *testing.M }

func (w withShared) Run() int {
	defer removeShared()
	return w.m.Run()
}
