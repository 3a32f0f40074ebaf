package main

import (
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Large inputs that several tests read are made once per test binary
// (shared) and linked into each test's folder: a test that finds its
// input changed fails as it would with a copy of its own (the harness
// compares the folder's files before and after), and the tests after it
// are not given an input it changed, because shared checks it again.

var (
	sharedMu    sync.Mutex
	sharedDir   string
	sharedFiles = map[string]string{} // name -> path in sharedDir
	sharedSums  = map[string]string{} // name -> the made file's digest
)

// shared returns the path of the shared input name (a file of that base
// name in a folder of its own), made by make (into the path given) on
// first use, and checks it is still as made.
func shared(t *testing.T, name string, make func(t *testing.T, path string)) string {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedDir == "" {
		d, err := os.MkdirTemp("", "nsyscheck-shared-")
		if err != nil {
			t.Fatal(err)
		}
		sharedDir = d
	}
	p, ok := sharedFiles[name]
	if !ok {
		sub, err := os.MkdirTemp(sharedDir, "")
		if err != nil {
			t.Fatal(err)
		}
		p = filepath.Join(sub, name)
		make(t, p)
		sharedFiles[name], sharedSums[name] = p, fileDigest(t, p)
	} else if fileDigest(t, p) != sharedSums[name] {
		t.Fatalf("the shared input %s was changed by an earlier test", name)
	}
	return p
}

// linkShared puts the shared input name into dir as a hard link (a copy
// where the two folders cannot share one) and returns its path there.
func linkShared(t *testing.T, dir, name string, make func(t *testing.T, path string)) string {
	t.Helper()
	src := shared(t, name, make)
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.Link(src, dst); err == nil {
		return dst
	}
	writeFile(t, dst, readFile(t, src))
	return dst
}

// digestSeed seeds fileDigest's hash: one seed for the whole test binary,
// so that two digests of one file compare.
var digestSeed = maphash.MakeSeed()

// fileDigest is a file's content digest with its size and time. The hash
// need only tell a changed file within one run, not resist forgery:
// maphash reads the bytes several times faster than SHA-256, and every
// bad input's folder is digested twice.
func fileDigest(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var h maphash.Hash
	h.SetSeed(digestSeed)
	if _, err := io.Copy(&h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%016x/%d/%s", h.Sum64(), info.Size(), info.ModTime().Format(time.RFC3339Nano))
}

// removeShared removes the shared inputs.
func removeShared() {
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
}
