package environ

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestLookup(t *testing.T) {
	t.Setenv("NSYSCHECK_ENVIRON_TEST", "process")
	env := Env{"A=1", "B=", "A=2", "NOEQUALS"}
	if v, ok := env.Lookup("A"); v != "2" || !ok {
		t.Errorf("A: %q %v, want the last entry 2", v, ok)
	}
	if v, ok := env.Lookup("B"); v != "" || !ok {
		t.Errorf("B: %q %v, want set and empty", v, ok)
	}
	if _, ok := env.Lookup("NSYSCHECK_ENVIRON_TEST"); ok {
		t.Error("an Env given reads the process's variables")
	}
	if v := Env(nil).Get("NSYSCHECK_ENVIRON_TEST"); v != "process" {
		t.Errorf("nil Env: %q, want the process's value", v)
	}
	if got := With(map[string]string{"NSYSCHECK_ENVIRON_TEST": "given"}).Get("NSYSCHECK_ENVIRON_TEST"); got != "given" {
		t.Errorf("With: %q, want the value set over the process's", got)
	}
	if got := len(Env(nil).List()); got != len(os.Environ()) {
		t.Errorf("nil Env lists %d entries, the process has %d", got, len(os.Environ()))
	}
}

func TestUserCacheDir(t *testing.T) {
	for _, c := range []struct {
		env  Env
		want string
	}{
		{Env{"HOME=/home/u", "XDG_CACHE_HOME=/c"}, "/c"},
		{Env{"HOME=/home/u"}, "/home/u/.cache"},
		{Env{"HOME=/home/u", "XDG_CACHE_HOME="}, "/home/u/.cache"},
	} {
		if got, err := c.env.UserCacheDir(); err != nil || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.env, got, err, c.want)
		}
	}
	for _, env := range []Env{{}, {"XDG_CACHE_HOME=rel"}} {
		if got, err := env.UserCacheDir(); err == nil {
			t.Errorf("%q: %q, want an error", env, got)
		}
	}
}

func TestLookPath(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	tool := filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "tool"), []byte("not runnable"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := Env{"PATH=" + other + string(filepath.ListSeparator) + dir}
	if got, err := env.LookPath("tool"); err != nil || got != tool {
		t.Errorf("tool on PATH: %q %v, want %q (the one that can run)", got, err, tool)
	}
	if got, err := env.LookPath(tool); err != nil || got != tool {
		t.Errorf("a path given: %q %v", got, err)
	}
	if _, err := env.LookPath(filepath.Join(other, "tool")); err == nil {
		t.Error("a file without execute permission given by path was found")
	}
	if _, err := (Env{"PATH=" + other}).LookPath("tool"); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("only a file that cannot run on PATH: %v, want exec.ErrNotFound", err)
	}
	if _, err := (Env{}).LookPath("tool"); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("no PATH: %v, want exec.ErrNotFound", err)
	}
}
