// Package privacy finds what an Nsight Systems capture reveals beyond the
// profiled run itself — the caller's environment, other processes on the
// machine, credentials, the working folder — and writes a shareable copy of a
// SQLite export without it.
//
// `nsys profile` records the profiled process's whole environment, its
// working folder and a snapshot of every process on the machine. The SQLite
// export keeps them in TARGET_INFO_SYSTEM_ENV, META_DATA_CAPTURE, PROCESSES,
// ThreadNames and StringIds, and, because nsys grows its tables in place,
// leaves stale copies of the same bytes in unused space of the file where no
// query shows them. Scan reports all of it; Scrub removes it.
//
// The allowlist of environment variables lives in this file only, and the
// secret detector (FindSecrets) in secrets.go, so that the code that builds
// the profiled program's environment and the code that checks a capture
// agree.
package privacy

import (
	"strings"
)

// Allowlist names the environment variables a shareable capture may keep:
// exact names, or prefixes written with a trailing "*". They are what the
// course's captures are made with and what the program needs to find CUDA.
var Allowlist = []string{"PATH", "LD_LIBRARY_PATH", "HOME", "CUDA_*", "NSYS_*"}

// SecretWords are the words that make a variable name look like it holds a
// secret. A name matches when one of its "_"-separated parts starts with one
// of them (GITHUB_TOKEN, SECRET_KEY, DB_PASSWORD, AWS_SECRET_ACCESS_KEY,
// HTTP_AUTHORIZATION, GOOGLE_APPLICATION_CREDENTIALS), or when its last part
// ends with one of the longer ones (APITOKEN, DBPASSWORD).
var SecretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH"}

// Redacted replaces a value that Scrub removed. Scan treats a value equal
// to it as already scrubbed.
const Redacted = "[redacted]"

// nsysPreload is the LD_PRELOAD placeholder nsys itself records for the
// profiled process; it is not the caller's.
const nsysPreload = "{}"

// NsysInjected names the variables nsys sets in the profiled process (and
// so in every child it forks) to inject its own libraries: exact names, or
// prefixes written with a trailing "*". They say nothing of the caller's
// machine. Leading underscores are ignored when matching, since a search
// of raw bytes may find __GL_... as GL_....
var NsysInjected = []string{"QUADD_*", "CUPTI_*", "NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH",
	"TRACE_START_IMMEDIATELY", "GL_CONSTANT_FRAME_RATE_HINT"}

// nsysLibraries are the file names (prefixes) of the libraries nsys puts in
// LD_PRELOAD.
var nsysLibraries = []string{"libToolsInjection", "libLinuxKeyboardInterceptorProxy"}

// InjectedByNsys reports whether NAME=value is one nsys itself set to
// inject its libraries: a name on NsysInjected, or an LD_PRELOAD whose every
// entry is one of nsys's libraries (or nsys's "{}" placeholder). A name that
// looks like a secret or a value that looks like a credential is never
// nsys's, and an LD_PRELOAD that adds anything else is the caller's.
func InjectedByNsys(name, value string) bool {
	if LooksSecretName(name) || LooksSecretValue(value) {
		return false
	}
	if name == "LD_PRELOAD" {
		v := strings.Trim(value, `"`)
		if v == nsysPreload {
			return true
		}
		entries := strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' })
		if len(entries) == 0 {
			return false
		}
		for _, e := range entries {
			base := e[strings.LastIndexByte(e, '/')+1:]
			ok := false
			for _, lib := range nsysLibraries {
				ok = ok || (strings.HasPrefix(base, lib) && strings.Contains(base, ".so"))
			}
			if !ok {
				return false
			}
		}
		return true
	}
	return matchesAny(strings.TrimLeft(name, "_"), NsysInjected)
}

// nsysBlockMarker starts the environment block nsys writes for the
// processes it injects; nsysBlockReach is how far after it the block's
// variables lie.
const (
	nsysBlockMarker = "QUADD_"
	nsysBlockReach  = 1024
)

// InNsysBlock reports whether a NAME=value found in the raw, compressed
// bytes of a .nsys-rep is a fragment of the environment block nsys injects:
// the bytes before it (up to nsysBlockReach of them) hold nsys's QUADD_
// marker, the value is short (under 8 characters: a flag, a pid), and
// neither name nor value looks secret. Compression there cuts names short
// (CUPTI_PROFILE_MODE is stored as "_PROFILE_MODE=_"), so the name alone
// cannot be matched against NsysInjected.
func InNsysBlock(name, value string, before []byte) bool {
	if len(value) >= 8 || LooksSecretName(name) || LooksSecretValue(value) {
		return false
	}
	if len(before) > nsysBlockReach {
		before = before[len(before)-nsysBlockReach:]
	}
	return strings.Contains(string(before), nsysBlockMarker)
}

// ThreadSpan is a profiled process and the highest thread id nsys recorded
// for it. Where two processes share a pid, both are a globalPid's host and
// pid bits (nsysdb.ProcessOf, MaxTID with its process's host bits), so that
// ChildOfProfiled of a process's own bits finds children on its host only.
type ThreadSpan struct {
	PID, MaxTID int64
}

// ChildOfProfiled reports whether a process nsys recorded beside the
// profiled ones is one the application started while it ran — a
// DataLoader worker, a multiprocessing pool — rather than another process
// on the machine: its pid comes after a profiled process's pid and no later
// than the last thread id nsys recorded for that process. Linux draws
// process and thread ids from one counter, so such a pid was handed out
// while the profiled process was running and making threads.
func ChildOfProfiled(pid int64, profiled []ThreadSpan) bool {
	for _, p := range profiled {
		if pid > p.PID && pid <= p.MaxTID {
			return true
		}
	}
	return false
}

// AllowedEnv reports whether the variable name may be kept in a shareable
// capture or passed to the profiled program: it is on Allowlist or on keep
// (same syntax: exact names or "PREFIX*"), and its name does not look like a
// secret — a CUDA_AUTH_TOKEN is refused even though CUDA_* is allowed.
func AllowedEnv(name string, keep []string) bool {
	if name == "" || LooksSecretName(name) {
		return false
	}
	return matchesAny(name, Allowlist) || matchesAny(name, keep)
}

func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}

// LooksSecretName reports whether a variable name looks like it holds a
// secret (see SecretWords).
func LooksSecretName(name string) bool {
	up := strings.ToUpper(name)
	parts := strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for _, part := range parts {
		for _, w := range SecretWords {
			if strings.HasPrefix(part, w) {
				return true
			}
		}
	}
	// A last part with the word glued on: APITOKEN, DBPASSWORD, HFSECRET.
	// Only the last part, so that TIKTOKEN_CACHE_DIR is not a token.
	if n := len(parts); n > 0 {
		for _, w := range SecretWords {
			if len(w) > 3 && strings.HasSuffix(parts[n-1], w) {
				return true
			}
		}
	}
	return false
}
