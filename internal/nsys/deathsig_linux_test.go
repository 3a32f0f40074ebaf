package nsys

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/proctest"
)

// deathParentEnv makes the test binary the parent of TestKilledParent: it
// starts the stand-in nsys with Command, prints the stand-in's pid and
// waits to be killed.
const deathParentEnv = "NSYSCHECK_TEST_DEATH_PARENT"

// deathQuestionEnv makes the parent start the stand-in as a program with
// nothing to save (KillOnCancel).
const deathQuestionEnv = "NSYSCHECK_TEST_DEATH_QUESTION"

func init() {
	standIn := os.Getenv(deathParentEnv)
	if standIn == "" {
		return
	}
	cmd := Command(context.Background(), "", nil, standIn)
	if os.Getenv(deathQuestionEnv) != "" {
		cmd = KillOnCancel(cmd)
	}
	if err := cmd.Start(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	g := startGuard(cmd) // as Run starts one
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Hour)
	g.release()
	os.Exit(1)
}

// TestKilledParent: nsyscheck killed by SIGKILL (nothing of it runs to
// stop its children) while a stand-in nsys runs under Command: the kernel
// sends the stand-in its death signal, and the stand-in, which stops what
// it started on SIGTERM as nsys does, is gone with its own child.
func TestKilledParent(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	childPid := filepath.Join(dir, "child")
	standIn := filepath.Join(dir, "nsys")
	script := "#!/bin/sh\ntrap 'kill $child; exit 143' TERM\nsleep 3600 &\nchild=$!\necho $child > " + childPid + "\nwait\n"
	if err := os.WriteFile(standIn, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	parent, pid := startParent(t, deathParentEnv+"="+standIn)
	child := childOf(t, childPid)
	if proctest.Gone(pid, 0) {
		t.Fatal("the stand-in nsys ended before its parent was killed")
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if !proctest.Gone(pid, 5*time.Second) {
		t.Errorf("the stand-in nsys (pid %d) still runs after its parent was killed", pid)
	}
	if !proctest.Gone(child, 5*time.Second) {
		t.Errorf("the stand-in's child (pid %d) still runs after nsyscheck was killed", child)
	}
}

// TestKilledParentQuestion: nsyscheck killed by SIGKILL while a program
// with nothing to save (KillOnCancel: nsys --version, nsys analyze, a
// question a run asks) runs, one that ignores SIGTERM: its death signal is
// SIGKILL, so it does not live on, where SIGTERM left it running.
func TestKilledParentQuestion(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	standIn := filepath.Join(dir, "nsys")
	if err := os.WriteFile(standIn, []byte("#!/bin/sh\ntrap '' TERM INT\nwhile :; do sleep 0.05; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	parent, pid := startParent(t, deathParentEnv+"="+standIn, deathQuestionEnv+"=1")
	// Past its trap: the stand-in ignores SIGTERM.
	time.Sleep(200 * time.Millisecond)
	if proctest.Gone(pid, 0) {
		t.Fatal("the stand-in ended before its parent was killed")
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if !proctest.Gone(pid, 2*time.Second) {
		t.Errorf("the stand-in (pid %d), which ignores SIGTERM, still runs after its parent was killed", pid)
	}
}

// startParent starts this test binary as the parent of a stand-in, with
// env added to its environment, and returns it and the stand-in's pid as
// it reports it; the stand-in's group is killed when the test ends.
func startParent(t *testing.T, env ...string) (*exec.Cmd, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self, "-test.run=^$")
	parent.Env = append(os.Environ(), env...)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent said nothing: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent said %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	return parent, pid
}

// TestKilledParentGrandchild: nsyscheck killed by SIGKILL while a program
// it runs has started one of its own, and both ignore SIGTERM (or, with
// nothing to save, the first is killed by its death signal and leaves its
// child behind): the death signal reaches the first alone, and the
// group's guard stops the rest, where both once ran on.
func TestKilledParentGrandchild(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, c := range []struct {
		name string
		env  []string
	}{{"command", nil}, {"question", []string{deathQuestionEnv + "=1"}}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			childPid := filepath.Join(dir, "child")
			standIn := filepath.Join(dir, "nsys")
			script := "#!/bin/sh\ntrap '' TERM INT\n(trap '' TERM INT; exec sleep 3600) &\necho $! > '" + childPid + "'\nwait\n"
			if err := os.WriteFile(standIn, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			parent, pid := startParent(t, append([]string{deathParentEnv + "=" + standIn}, c.env...)...)
			child := childOf(t, childPid)
			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			if !proctest.Gone(pid, 3*time.Second) {
				t.Errorf("the stand-in (pid %d) still runs after its parent was killed", pid)
			}
			if !proctest.Gone(child, 3*time.Second) {
				t.Errorf("the stand-in's child (pid %d), which ignores SIGTERM, still runs after nsyscheck was killed", child)
			}
		})
	}
}

// childOf waits for the stand-in to write its child's pid into path (it
// has started its child then) and returns it.
func childOf(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		data, _ := os.ReadFile(path)
		if child, _ := strconv.Atoi(strings.TrimSpace(string(data))); child != 0 {
			return child
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in started no child")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
