package nsys

import "syscall"

// procAttr puts a Command in its own process group and asks the kernel to
// send it SIGTERM when nsyscheck dies, even by SIGKILL, which nothing of
// nsyscheck outlives to stop it (Pdeathsig, Linux only). SIGTERM, not
// SIGKILL: nsys stops the program it profiles and its own helpers on
// SIGTERM, where a SIGKILL would leave them running without it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// hardDeath makes a death signal SIGKILL, for a program with nothing to
// save (KillOnCancel), which may ignore SIGTERM.
func hardDeath(a *syscall.SysProcAttr) {
	if a != nil {
		a.Pdeathsig = syscall.SIGKILL
	}
}
