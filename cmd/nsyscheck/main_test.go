package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the nsyscheck command, so the
// scripts in testdata/script run it the way a user does.
func TestMain(m *testing.M) {
	testscript.Main(withShared{m}, map[string]func(){
		"nsyscheck": func() {
			if dir := os.Getenv(scriptProfilesEnv); dir != "" {
				os.Setenv(cpuProfileEnv, filepath.Join(dir, fmt.Sprintf("nsyscheck-%d.prof", os.Getpid())))
			}
			os.Exit(command())
		},
		// A process that writes to an SQLite file without committing,
		// until its stdin closes (SQLite's locks belong to a process).
		"sqlite-writer": func() { os.Exit(sqliteWriter(os.Args[1])) },
	})
}

// scriptProfilesEnv names a folder into which each nsyscheck process the
// scripts start writes a CPU profile of its own (nsyscheck-PID.prof), to
// see where the scripts' processes spend their time:
//
//	NSYSCHECK_SCRIPT_PROFILES=/tmp/p go test ./cmd/nsyscheck -run TestScripts
//	go tool pprof -top /tmp/p/*.prof
const scriptProfilesEnv = "NSYSCHECK_SCRIPT_PROFILES"

// withShared runs the tests, then removes the inputs they shared.
type withShared struct{ m *testing.M }

func (w withShared) Run() int {
	defer removeShared()
	return w.m.Run()
}
