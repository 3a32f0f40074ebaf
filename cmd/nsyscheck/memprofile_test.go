package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestMemProfileWritten starts the heap profile, allocates, and stops it:
// the file holds a gzipped profile that names the allocating function.
func TestMemProfileWritten(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	path := filepath.Join(t.TempDir(), "heap.prof")
	stop := startMemProfile(path)
	held := allocateForProfile()
	runtime.GC()
	stop()
	runtime.KeepAlive(held)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: not a gzipped profile: %v", path, err)
	}
	body, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte("allocateForProfile")) {
		t.Errorf("%s: %d bytes that do not name allocateForProfile", path, len(body))
	}
	if stop := startMemProfile(""); stop == nil {
		t.Error("no stop function without a path")
	} else {
		stop()
	}
}

// allocateForProfile holds 8 MiB in 64 KiB pieces.
func allocateForProfile() [][]byte {
	var out [][]byte
	for range 128 {
		out = append(out, make([]byte, 64<<10))
	}
	return out
}
