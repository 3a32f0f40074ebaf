// Package environ is a command's environment: the process's, or one a
// caller gives so that commands run side by side in one process (tests)
// each see their own PATH, NSYS, COLUMNS and cache folder.
package environ

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Env is an environment as exec.Cmd.Env holds one, "KEY=value" entries,
// the last of a key winning; nil is the process's own environment.
type Env []string

// With returns the process's environment with vars set over it.
func With(vars map[string]string) Env {
	env := Env(os.Environ())
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// Get is the value of key, "" when unset.
func (e Env) Get(key string) string {
	v, _ := e.Lookup(key)
	return v
}

// Lookup is the value of key and whether it is set.
func (e Env) Lookup(key string) (string, bool) {
	if e == nil {
		return os.LookupEnv(key)
	}
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// List is the environment's entries, for a process started with it.
func (e Env) List() []string {
	if e == nil {
		return os.Environ()
	}
	return e
}

// UserCacheDir is os.UserCacheDir read from e: $XDG_CACHE_HOME when set
// and absolute, else $HOME/.cache (Linux's rule, where nsys runs).
func (e Env) UserCacheDir() (string, error) {
	if e == nil {
		return os.UserCacheDir()
	}
	if dir := e.Get("XDG_CACHE_HOME"); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", errors.New("path in $XDG_CACHE_HOME is relative")
		}
		return dir, nil
	}
	home := e.Get("HOME")
	if home == "" {
		return "", errors.New("neither $XDG_CACHE_HOME nor $HOME are defined")
	}
	return filepath.Join(home, ".cache"), nil
}

// LookPath is exec.LookPath searching e's PATH: a name with a slash is
// checked as given, else the first executable file of that name in a
// folder of PATH (an empty entry is the working folder) is returned.
func (e Env) LookPath(file string) (string, error) {
	if e == nil {
		return exec.LookPath(file)
	}
	if strings.Contains(file, "/") {
		if err := executable(file); err != nil {
			return "", &exec.Error{Name: file, Err: err}
		}
		return file, nil
	}
	for _, dir := range filepath.SplitList(e.Get("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if executable(p) == nil {
			if !filepath.IsAbs(p) {
				return p, &exec.Error{Name: file, Err: exec.ErrDot}
			}
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// executable is nil when p is a regular file someone may execute.
func executable(p string) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}
