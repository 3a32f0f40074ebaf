package capture

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/proctest"
)

// TestLoadNsysRepStaleCacheSameSize: a report replaced by another of the
// same size and an older modification time is not read from the old
// export.
func TestLoadNsysRepStaleCacheSameSize(t *testing.T) {
	nsys, calls := fakeNsys(t, "copy")
	report, orig, mtime := reportCopy(t, "run.nsys-rep")
	if _, err := loadNsysRep(report, Options{Nsys: nsys}); err != nil {
		t.Fatal(err)
	}
	other := append([]byte(nil), orig...)
	other[len(other)-1] ^= 0xff
	if err := os.WriteFile(report, other, 0o644); err != nil {
		t.Fatal(err)
	}
	old := mtime.Add(-time.Hour)
	if err := os.Chtimes(report, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := loadNsysRep(report, Options{Nsys: nsys}); err != nil {
		t.Fatal(err)
	}
	if n := exportCalls(t, calls); n != 2 {
		t.Errorf("nsys called %d times, want 2: the old export was reused for a different report", n)
	}
	// The export records what it was made from: the report's size and
	// SHA-256.
	sum := sha256.Sum256(other)
	db, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(filepath.Join(filepath.Dir(report), "run.nsyscheck.sqlite")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	var digest string
	if err := db.QueryRow(`SELECT size, sha256 FROM NSYSCHECK_SOURCE`).Scan(&size, &digest); err != nil {
		t.Fatal(err)
	}
	if size != int64(len(other)) || digest != hex.EncodeToString(sum[:]) {
		t.Errorf("export records %d bytes, %s; want %d, %x", size, digest, len(other), sum)
	}
}

// TestLoadNsysRepInterrupted: cancelling the context stops nsys and what it
// started (its process group) and removes the half-written export; a
// leftover of a killed run is swept by the next one.
func TestLoadNsysRepInterrupted(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	nsys := filepath.Join(dir, "nsys")
	script := `#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  case "$1" in --output) out="$2"; shift;; esac
  shift
done
printf 'SQLite format 3' > "$out"
sleep 300 &
echo $! > ` + shq(pidFile) + `
wait
`
	if err := os.WriteFile(nsys, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	report, _, _ := reportCopy(t, "x.nsys-rep")
	rdir := filepath.Dir(report)
	// A leftover of a run that was killed (a process id no longer running).
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(rdir, ".x.nsyscheck.sqlite.tmp-"+strconv.Itoa(gone.Process.Pid)+"-123.sqlite")
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 500; i++ {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err := loadNsysRep(report, Options{Nsys: nsys, Context: ctx})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v, want an interruption", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to stop", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !proctest.Gone(pid, time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("nsys's child %d outlived the interruption", pid)
	}
	if got := strings.Join(dirNames(t, rdir), "|"); got != "x.nsys-rep" {
		t.Errorf("folder holds %s, want only the report", got)
	}
}
