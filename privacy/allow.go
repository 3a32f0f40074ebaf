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
// The allowlist of environment variables and the secret patterns live in this
// file only, so that the code that builds the profiled program's environment
// and the code that checks a capture agree.
package privacy

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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

// secretValuePrefixes are the prefixes of well-known credential formats, and
// how many characters must follow the prefix for a value to count.
var secretValuePrefixes = []struct {
	prefix string
	min    int
}{
	{"ghp_", 20}, {"gho_", 20}, {"ghs_", 20}, {"ghu_", 20}, {"github_pat_", 20},
	{"glpat-", 16}, {"xoxb-", 16}, {"xoxp-", 16}, {"xoxa-", 16},
	{"sk-", 20}, {"hf_", 20}, {"AKIA", 16}, {"ASIA", 16},
	{"-----BEGIN", 10},
}

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
// for it.
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

// FilterEnv returns the "NAME=value" entries of env whose names AllowedEnv
// accepts, in their original order.
func FilterEnv(env []string, keep []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if AllowedEnv(name, keep) {
			out = append(out, kv)
		}
	}
	return out
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

// LooksSecretValue reports whether a value looks like a credential on its
// own: a URL with a user and password, or a well-known token format.
func LooksSecretValue(value string) bool {
	if len(URLCredentials(value)) > 0 {
		return true
	}
	for _, p := range secretValuePrefixes {
		if i := strings.Index(value, p.prefix); i >= 0 && (i == 0 || !isTokenByte(value[i-1])) {
			rest := value[i+len(p.prefix):]
			n := 0
			for n < len(rest) && isTokenByte(rest[n]) {
				n++
			}
			if n >= p.min || (p.prefix == "-----BEGIN" && strings.Contains(rest, "PRIVATE KEY")) {
				return true
			}
		}
	}
	return false
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// urlCredRE matches scheme://user:password@host. The user and password may
// not hold "/", "@" or white space; the password must not be empty.
var urlCredRE = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.\-]*)://([^/\s:@"';]+):([^/\s@"';]+)@([^/\s"';]+)`)

// URLCredential is a user:password pair found in a URL.
type URLCredential struct {
	URL      string // the whole match, scheme://user:password@host
	Scheme   string
	User     string
	Password string
	Host     string
	Offset   int // byte offset of the match in the searched text
}

// URLCredentials returns every scheme://user:password@host in s.
func URLCredentials(s string) []URLCredential {
	var out []URLCredential
	for _, m := range urlCredRE.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, URLCredential{
			URL:      s[m[0]:m[1]],
			Scheme:   s[m[2]:m[3]],
			User:     s[m[4]:m[5]],
			Password: s[m[6]:m[7]],
			Host:     s[m[8]:m[9]],
			Offset:   m[0],
		})
	}
	return out
}

// Mask shows enough of a value to recognise it and never all of it: at most
// the first 3 characters (fewer for short values: a quarter of them), "…",
// and the length in characters, e.g. "nsc…(19 chars)". An empty value is
// "(empty)".
func Mask(value string) string {
	n := utf8.RuneCountInString(value)
	if n == 0 {
		return "(empty)"
	}
	show := min(3, n/4)
	var b strings.Builder
	for _, r := range value {
		if show == 0 {
			break
		}
		if r < 0x20 || r == 0x7f {
			r = '?'
		}
		b.WriteRune(r)
		show--
	}
	b.WriteString("…(")
	b.WriteString(strconv.Itoa(n))
	if n == 1 {
		b.WriteString(" char)")
	} else {
		b.WriteString(" chars)")
	}
	return b.String()
}

// MaskURL masks only the password of every scheme://user:password@host in
// s, keeping the rest readable: "https://bob:hun…(9 chars)@example.com".
// Callers still must not print s unmasked elsewhere.
func MaskURL(s string) string {
	creds := URLCredentials(s)
	for i := len(creds) - 1; i >= 0; i-- {
		c := creds[i]
		masked := c.Scheme + "://" + c.User + ":" + Mask(c.Password) + "@" + c.Host
		s = s[:c.Offset] + masked + s[c.Offset+len(c.URL):]
	}
	return s
}

// Secret is a credential found inside a string by FindSecrets.
type Secret struct {
	// Name is what names the secret: the option or variable ("password"
	// for --password=X, "GITHUB_TOKEN" for GITHUB_TOKEN=X), "" for a bare
	// token or a credential URL.
	Name string
	// Value is the secret itself: the option's or variable's value, the
	// whole token, or the whole scheme://user:password@host.
	Value string
	// Offset is the byte offset of Value in the searched string.
	Offset int
}

// FindSecrets is the one secret detector: it returns every credential in s,
// whatever the string is (a command line, a process name, an NVTX range's
// text, a thread name, a StringIds value, an environment entry). It splits s
// into arguments at white space and NUL bytes (quotes around an argument
// are not part of it) and reports
//
//   - the value of NAME=VALUE, --NAME=VALUE and -NAME=VALUE where the name
//     looks like a secret's (LooksSecretName);
//   - the argument after --NAME or -NAME where the name looks like a
//     secret's (--password hunter2), unless it is another option;
//   - a token of a well-known credential format anywhere (ghp_..., AKIA...);
//   - a URL with a user and password.
//
// Values already Redacted are not secrets. The results are in the order of
// their offsets and do not overlap.
func FindSecrets(s string) []Secret {
	var out []Secret
	add := func(name, value string, off int) {
		if value == "" || value == Redacted || strings.Trim(value, `"'`) == Redacted || strings.Contains(value, "…(") {
			return // nothing, or already masked
		}
		for _, o := range out {
			if off < o.Offset+len(o.Value) && o.Offset < off+len(value) {
				return // inside one found already
			}
		}
		out = append(out, Secret{Name: name, Value: value, Offset: off})
	}
	for _, c := range URLCredentials(s) {
		add("", c.URL, c.Offset)
	}
	args := splitArgs(s)
	for i, a := range args {
		text := a.text
		opt := strings.TrimLeft(text, "-")
		if name, value, ok := strings.Cut(opt, "="); ok {
			if LooksSecretName(name) {
				add(name, strings.Trim(value, `"'`), a.off+len(text)-len(opt)+len(name)+1+quoteLen(value))
			}
		} else if opt != text && LooksSecretName(opt) && i+1 < len(args) && !strings.HasPrefix(args[i+1].text, "-") {
			add(opt, args[i+1].text, args[i+1].off)
		}
	}
	for _, t := range tokenSpans(s) {
		add("", s[t[0]:t[1]], t[0])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out
}

// quoteLen is 1 when v starts with a quote that FindSecrets strips.
func quoteLen(v string) int {
	if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, `'`) {
		return 1
	}
	return 0
}

// arg is one argument of a string split by splitArgs.
type arg struct {
	text string
	off  int
}

// splitArgs splits s at white space and NUL bytes; quotes around an
// argument are dropped.
func splitArgs(s string) []arg {
	var out []arg
	i := 0
	for i < len(s) {
		for i < len(s) && isArgSep(s[i]) {
			i++
		}
		start := i
		for i < len(s) && !isArgSep(s[i]) {
			i++
		}
		if i > start {
			a := arg{text: s[start:i], off: start}
			if len(a.text) >= 2 && (a.text[0] == '"' || a.text[0] == '\'') && a.text[len(a.text)-1] == a.text[0] {
				a.text, a.off = a.text[1:len(a.text)-1], a.off+1
			}
			out = append(out, a)
		}
	}
	return out
}

func isArgSep(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 || c == '\v' || c == '\f'
}

// tokenSpans returns the [start, end) spans of well-known credential
// tokens in s (see secretValuePrefixes).
func tokenSpans(s string) [][2]int {
	var out [][2]int
	for _, p := range secretValuePrefixes {
		from := 0
		for {
			i := strings.Index(s[from:], p.prefix)
			if i < 0 {
				break
			}
			i += from
			from = i + len(p.prefix)
			if i > 0 && isTokenByte(s[i-1]) {
				continue
			}
			rest := s[from:]
			n := 0
			for n < len(rest) && isTokenByte(rest[n]) {
				n++
			}
			switch {
			case p.prefix == "-----BEGIN" && strings.Contains(rest, "PRIVATE KEY"):
				out = append(out, [2]int{i, len(s)})
			case p.prefix != "-----BEGIN" && n >= p.min:
				out = append(out, [2]int{i, from + n})
			}
		}
	}
	return out
}

// MaskSecrets returns s with every secret FindSecrets finds replaced by its
// mask (Mask; a URL keeps its scheme, user and host: MaskURL). Everything
// nsyscheck prints that a capture or a user's file supplied goes through it.
//
// A secret can hide another (a NAME=VALUE in a URL's host): masking repeats
// until nothing is left to mask, so that masking twice changes nothing.
func MaskSecrets(s string) string {
	for round := 0; round < 8; round++ {
		secrets := FindSecrets(s)
		if len(secrets) == 0 {
			break
		}
		for i := len(secrets) - 1; i >= 0; i-- {
			sec := secrets[i]
			masked := Mask(sec.Value)
			if sec.Name == "" && len(URLCredentials(sec.Value)) > 0 {
				masked = MaskURL(sec.Value)
			}
			s = s[:sec.Offset] + masked + s[sec.Offset+len(sec.Value):]
		}
	}
	return s
}
