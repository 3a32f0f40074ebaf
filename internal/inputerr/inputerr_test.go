package inputerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestErrorText(t *testing.T) {
	e := &Error{Path: "x.sqlite", Where: "table StringIds", Problem: "cannot read the table",
		Err: errors.New("disk I/O error"), Hint: "export it again"}
	want := "x.sqlite: table StringIds: cannot read the table: disk I/O error (export it again)"
	if e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	if !Is(e) || !errors.Is(e, e.Err) {
		t.Error("the error does not unwrap to its cause")
	}
	if Is(errors.New("plain")) {
		t.Error("a plain error counts as an input error")
	}
}

// TestOpen: a FIFO with no writer, a device and a folder are refused at
// once, saying what they are; a missing file is named as such.
func TestOpen(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	cases := map[string]string{fifo: "FIFO", "/dev/zero": "device", os.TempDir(): "folder",
		filepath.Join(t.TempDir(), "absent"): "no such file"}
	for p, want := range cases {
		f, _, err := Open(p)
		if err == nil {
			f.Close()
			t.Fatalf("%s opened", p)
		}
		var ie *Error
		if !errors.As(err, &ie) || ie.Path != p || !strings.Contains(ie.Problem, want) {
			t.Errorf("%s: %v, want it called %q", p, err, want)
		}
	}
}

// TestBounded: a file of exactly the bound reads whole; one byte more is
// an error that names the file and the bound.
func TestBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 2<<20, "a test file"); err != nil || len(b) != 2<<20 {
		t.Fatalf("read %d bytes, err %v", len(b), err)
	}
	_, err := ReadFile(p, 1<<20, "a test file")
	if err == nil || !strings.Contains(err.Error(), "more than 1 MiB, far larger than a test file can be") {
		t.Errorf("err = %v", err)
	}
	n, err := io.Copy(io.Discard, Bounded(strings.NewReader("abc"), 3, p, "x"))
	if n != 3 || err != nil {
		t.Errorf("read %d, err %v", n, err)
	}
}

func TestAttribute(t *testing.T) {
	e := &Error{Where: "copy with correlation id 7", Problem: "starts before its call"}
	err := Attribute(fmt.Errorf("wrapped: %w", e), "x.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY")
	if want := "x.sqlite: table CUPTI_ACTIVITY_KIND_MEMCPY, copy with correlation id 7: starts before its call"; e.Error() != want || !errors.Is(err, e) {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	named := &Error{Path: "y.csv", Problem: "p"}
	if Attribute(named, "x.sqlite", "table T"); named.Error() != "y.csv: p" {
		t.Errorf("an error that names its file was changed: %q", named.Error())
	}
	plain := errors.New("plain")
	if Attribute(plain, "x", "y") != plain {
		t.Error("a plain error was changed")
	}
}

// TestReadFile reads a file of exactly the limit whole, refuses one a
// byte longer before reading it, and holds a file once: the bytes it
// allocates are about the file's size, where growing a buffer by
// doubling held up to twice the file.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	const max = 8 << 20
	data := bytes.Repeat([]byte("0123456789abcdef"), max/16)
	at := filepath.Join(dir, "at-limit.json")
	over := filepath.Join(dir, "over.json")
	if err := os.WriteFile(at, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ReadFile(at, max, "a test file")
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file at the limit: %d bytes read, %v", len(got), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > max+max/4 {
		t.Errorf("reading %d bytes allocated %d", max, alloc)
	}
	runtime.ReadMemStats(&before)
	_, err = ReadFile(over, max, "a test file")
	runtime.ReadMemStats(&after)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "more than 8 MiB, far larger than a test file can be") {
		t.Fatalf("the file over the limit: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing a file over the limit allocated %d bytes", alloc)
	}
}
