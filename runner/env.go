package runner

import (
	"context"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// minimalEnv keeps from environ only the variables the allowlist admits
// (PATH, LD_LIBRARY_PATH, HOME, CUDA_*, NSYS_*) and the names in keep.
func minimalEnv(environ []string, keep []string) (env []string, iso runinfo.Isolation) {
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if privacy.AllowedEnv(name, keep) {
			env = append(env, kv)
			iso.EnvKept = append(iso.EnvKept, name)
		} else {
			iso.EnvDropped++
		}
	}
	sort.Strings(iso.EnvKept)
	return env, iso
}

// pidNamespacePrefix returns the argument list prefix that runs a program in
// its own PID namespace (with its own /proc), or nil and a reason when the
// machine does not allow it.
func pidNamespacePrefix(ctx context.Context) ([]string, string) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, "unshare (util-linux) is not installed, so nsys sees every process on the machine"
	}
	prefix := []string{unshare, "--pid", "--fork", "--mount-proc"}
	if os.Geteuid() != 0 {
		prefix = []string{unshare, "--user", "--map-root-user", "--pid", "--fork", "--mount-proc"}
	}
	if out, err := askTool(ctx, prefix[0], append(prefix[1:], "true")...); err != nil {
		return nil, "this machine does not allow a private PID namespace (" +
			strings.TrimSpace(firstLine(string(out), err.Error())) + "), so nsys sees every process on the machine"
	}
	return prefix, ""
}

func firstLine(s, fallback string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return fallback
	}
	return strings.SplitN(s, "\n", 2)[0]
}
