package proclocks

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFlocks: the kernel lists this process as holding an flock it took,
// and as waiting for it from a second open file.
func TestFlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, _ := a.Stat()
	if h, w, err := Flocks(st); err != nil || len(h)+len(w) != 0 {
		t.Skipf("no lock listed before any is taken: %v %v %v", h, w, err)
	}
	if err := syscall.Flock(int(a.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	b, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error)
	go func() { got <- syscall.Flock(int(b.Fd()), syscall.LOCK_EX) }()
	if err := AwaitWaiter(path, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	h, w, err := Flocks(st)
	if err != nil || len(h) != 1 || h[0] != os.Getpid() || len(w) != 1 || w[0] != os.Getpid() {
		t.Errorf("holders %v, waiters %v, %v; want this process once each", h, w, err)
	}
	a.Close() // lets go of the lock: the waiter gets it
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	b.Close()
}
