//go:build !linux

package nsys

import "syscall"

// procAttr puts a Command in its own process group; a death signal is
// Linux's alone.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// hardDeath: there is no death signal to make SIGKILL.
func hardDeath(*syscall.SysProcAttr) {}
