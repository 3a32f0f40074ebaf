package nsysdb

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// JobVars are the environment variables that name the job a process ran
// in, set by the scheduler or launcher that started it, in the order
// JobOf looks for them: the ranks of one run of a job share the value,
// and another run (the job submitted again) has another.
var JobVars = []string{"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "TORCHELASTIC_RUN_ID"}

// JobOf finds the job a capture's environment block names (TARGET_INFO_SYSTEM_ENV's
// DeviceEnvironment, "NAME=value;NAME=value"): the first of JobVars set
// to a value (not empty, not "[redacted]" as a scrubbed copy holds it,
// not torchrun's "none"), as that name and a digest of the value, a key
// the captures of one run share that echoes nothing of the environment;
// "" where the block names no job.
func JobOf(env string) string {
	set := map[string]string{}
	for piece := range strings.SplitSeq(env, ";") {
		if name, value, ok := strings.Cut(piece, "="); ok {
			if _, seen := set[name]; !seen {
				set[name] = strings.TrimSpace(value)
			}
		}
	}
	for _, name := range JobVars {
		switch v := set[name]; v {
		case "", "[redacted]", "none":
		default:
			sum := sha256.Sum256([]byte(v))
			return name + " " + hex.EncodeToString(sum[:6])
		}
	}
	return ""
}
