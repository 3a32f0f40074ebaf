package leftover

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

func TestOwnerGone(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	now := time.Now()
	for _, c := range []struct {
		rest string
		mod  time.Time
		want bool
	}{
		{strconv.Itoa(os.Getpid()) + "-x", now, false},     // this very process
		{strconv.Itoa(gone.Process.Pid) + "-x", now, true}, // a process that ended
		{"1-x", now, false},                         // a live process (init)
		{"1-x", now.Add(-25 * time.Hour), true},     // more than a day old
		{"noid", now.Add(-30 * time.Minute), false}, // no pid, young
		{"noid", now.Add(-2 * time.Hour), true},     // no pid, over an hour
	} {
		if got := OwnerGone(c.rest, c.mod); got != c.want {
			t.Errorf("OwnerGone(%q, %s ago) = %v, want %v", c.rest, time.Since(c.mod).Round(time.Minute), got, c.want)
		}
	}
}
