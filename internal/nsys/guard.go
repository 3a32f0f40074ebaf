package nsys

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// A guard stops a Command's process group should nsyscheck die while the
// group runs, even by SIGKILL. The death signal (procAttr) reaches the
// group's first process alone; a program it started that ignores the
// signal, or outlives its parent, would run on. The guard is a shell of
// its own group whose standard input is a pipe nsyscheck holds: when the
// pipe closes without the word that the Command ended, nsyscheck is gone,
// and the guard signals the whole group as cancelling would (SIGTERM, and
// SIGKILL StopGrace later; SIGKILL at once for a Command with nothing to
// save).
type guard struct {
	w    *os.File
	proc *exec.Cmd
}

// The guard's shell scripts: $1 is the group to stop.
var (
	guardSoft = `read v; [ "$v" = done ] && exit 0; kill -TERM -"$1" 2>/dev/null; sleep ` +
		strconv.FormatFloat(StopGrace.Seconds(), 'f', -1, 64) + `; kill -KILL -"$1" 2>/dev/null; exit 0`
	guardHard = `read v; [ "$v" = done ] && exit 0; kill -KILL -"$1" 2>/dev/null; exit 0`
)

// guardShell is the shell the guard runs in.
const guardShell = "/bin/sh"

// startGuard starts the guard of cmd's group, which cmd leads (Setpgid).
// Without a shell, or a pipe, there is no guard (nil): the death signal
// alone stops the group's first process.
func startGuard(cmd *exec.Cmd) *guard {
	if cmd.Process == nil || cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return nil
	}
	script := guardSoft
	if cmd.SysProcAttr.Pdeathsig == syscall.SIGKILL {
		script = guardHard
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	g := exec.Command(guardShell, "-c", script, "guard", strconv.Itoa(cmd.Process.Pid))
	g.Stdin = r
	// A group of its own: the terminal's Ctrl-C is nsyscheck's to handle,
	// not the guard's to die of.
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = g.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &guard{w: w, proc: g}
}

// release tells the guard the Command ended, so it stops nothing, and
// waits for it to exit.
func (g *guard) release() {
	if g == nil {
		return
	}
	_, _ = g.w.WriteString("done\n")
	g.w.Close()
	_ = g.proc.Wait()
}

// runGuarded runs cmd with a guard of its group (startGuard), and then
// kills what is left of the group.
func runGuarded(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	g := startGuard(cmd)
	err := cmd.Wait()
	killGroup(cmd)
	g.release()
	return err
}
