package regular

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefusesAtOnce: a FIFO, a device and a folder are refused at once,
// naming what they are; a file over the limit is refused, one at it read.
func TestRefusesAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "lock")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "a FIFO (named pipe)"},
		{"/dev/zero", "a device"},
		{dir, "a folder"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(c.path, 1<<20); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want a NotRegularError saying %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer in 5 s", c.path)
		}
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(big, 64<<10); !errors.As(err, &tl) || !strings.Contains(err.Error(), "more than 64 KiB") {
		t.Errorf("a 1 GiB sparse file: %v, want a TooLargeError of 64 KiB", err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(exact, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("a file of exactly the limit: %q %v", data, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}

// DanglingLink tells a link to nothing from a link to a file, a file and
// a path that is not there.
func TestDanglingLink(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dangling, live := filepath.Join(dir, "dangling"), filepath.Join(dir, "live")
	if err := os.Symlink(filepath.Join(dir, "gone"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, live); err != nil {
		t.Fatal(err)
	}
	if target, ok := DanglingLink(dangling); !ok || target != filepath.Join(dir, "gone") {
		t.Errorf("a link to nothing: %q, %v", target, ok)
	}
	for _, p := range []string{live, file, filepath.Join(dir, "none")} {
		if _, ok := DanglingLink(p); ok {
			t.Errorf("%s read as a link to nothing", p)
		}
	}
}
