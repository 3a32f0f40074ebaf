package nsysdb

import "testing"

// The job is the first scheduler's variable set to a value, as its name
// and a digest of the value; a scrubbed value, torchrun's "none" or none
// at all names no job.
func TestJobOf(t *testing.T) {
	const env = "RANK=2;HOME=/tmp;PATH=/usr/bin"
	for in, want := range map[string]string{
		env:                                    "",
		env + ";SLURM_JOB_ID=100":              "SLURM_JOB_ID ad5736686512",
		"SLURM_JOB_ID=100;" + env:              "SLURM_JOB_ID ad5736686512",
		env + ";SLURM_JOB_ID=200":              "SLURM_JOB_ID 27badc983df1",
		env + ";TORCHELASTIC_RUN_ID=none":      "",
		env + ";SLURM_JOB_ID=[redacted]":       "",
		env + ";SLURM_JOB_ID=;PBS_JOBID=7.pbs": "PBS_JOBID a92f6fe0b925",
		"":                                     "",
	} {
		if got := JobOf(in); got != want {
			t.Errorf("JobOf(%q) = %q, want %q", in, got, want)
		}
	}
	if JobOf("PBS_JOBID=7.pbs") == "" || JobOf("PBS_JOBID=7.pbs") == JobOf("PBS_JOBID=8.pbs") {
		t.Error("two PBS jobs given one key, or none")
	}
}
