package privacy

import (
	"strings"
	"testing"
)

func TestAllowedEnv(t *testing.T) {
	cases := []struct {
		name string
		keep []string
		want bool
	}{
		{"PATH", nil, true},
		{"LD_LIBRARY_PATH", nil, true},
		{"HOME", nil, true},
		{"CUDA_VISIBLE_DEVICES", nil, true},
		{"CUDA_HOME", nil, true},
		{"NSYS_KEEP", nil, true},
		{"CUDA_AUTH_TOKEN", nil, false}, // allowed prefix, secret name
		{"NSYS_API_KEY", nil, false},
		{"PATHX", nil, false},
		{"path", nil, false},
		{"CUDA", nil, false},
		{"USER", nil, false},
		{"PWD", nil, false},
		{"OMP_NUM_THREADS", nil, false},
		{"OMP_NUM_THREADS", []string{"OMP_*"}, true},
		{"TZ", []string{"TZ"}, true},
		{"TZX", []string{"TZ"}, false},
		{"GITHUB_TOKEN", []string{"GITHUB_TOKEN"}, false}, // keep cannot let a secret through
		{"", nil, false},
	}
	for _, c := range cases {
		if got := AllowedEnv(c.name, c.keep); got != c.want {
			t.Errorf("AllowedEnv(%q, %q) = %v, want %v", c.name, c.keep, got, c.want)
		}
	}
}

func TestLooksSecretName(t *testing.T) {
	secret := []string{"NSC_FAKE_TOKEN", "GITHUB_TOKEN", "HF_TOKEN", "SECRET_KEY", "AWS_SECRET_ACCESS_KEY",
		"DB_PASSWORD", "MYSQL_PWD_PASSWD", "API_KEY", "KEYRING_PASS", "GOOGLE_APPLICATION_CREDENTIALS",
		"HTTP_AUTHORIZATION", "AUTH", "npm_config__auth", "APITOKEN", "DBPASSWORD", "access-token", "x.secret"}
	plain := []string{"PATH", "HOME", "TIKTOKEN_CACHE_DIR", "NV_LIBCUBLAS_VERSION", "NSC_NOTE", "LANG",
		"MONKEY_BUSINESS", "TERM", "OLDPWD"}
	for _, n := range secret {
		if !LooksSecretName(n) {
			t.Errorf("LooksSecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if LooksSecretName(n) {
			t.Errorf("LooksSecretName(%q) = true, want false", n)
		}
	}
	// AUTHOR starts with AUTH: flagged on purpose (a false alarm is cheap).
	if !LooksSecretName("AUTHOR_NAME_X") {
		t.Errorf("LooksSecretName(AUTHOR_NAME_X) = false; the AUTH prefix rule changed")
	}
}

func TestURLCredentials(t *testing.T) {
	cases := []struct {
		in                   string
		n                    int
		user, password, host string
	}{
		{"https://alice:s3cr3t@example.com/repo.git", 1, "alice", "s3cr3t", "example.com"},
		{"postgres://app:p%40ss@db.internal:5432/x", 1, "app", "p%40ss", "db.internal:5432"},
		{"see http_proxy=http://u:pw@proxy:3128 and more", 1, "u", "pw", "proxy:3128"},
		{"git+ssh://me:tok-123@host", 1, "me", "tok-123", "host"},
		{"a;b=https://x:y@h;c=ftp://p:q@r", 2, "x", "y", "h"},
		{"redis://:s3cretPassw0rd@redis-host:6379/0", 1, "", "s3cretPassw0rd", "redis-host:6379"}, // no user
		{"https://alice:p@ssw0rd@host.example.com/x", 1, "alice", "p@ssw0rd", "host.example.com"}, // "@" unescaped
		{"https://:@example.com", 0, "", "", ""},
		{"https://example.com/path", 0, "", "", ""},
		{"https://user@example.com", 0, "", "", ""},  // no password
		{"https://user:@example.com", 0, "", "", ""}, // empty password
		{"mailto:bob@example.com", 0, "", "", ""},
		{"user:pass@host", 0, "", "", ""}, // no scheme
		{"http://[::1]:8080/", 0, "", "", ""},
		{"time 12:30@noon", 0, "", "", ""},
	}
	for _, c := range cases {
		got := URLCredentials(c.in)
		if len(got) != c.n {
			t.Errorf("URLCredentials(%q) found %d, want %d: %+v", c.in, len(got), c.n, got)
			continue
		}
		if c.n == 0 {
			if LooksSecretValue(c.in) {
				t.Errorf("LooksSecretValue(%q) = true", c.in)
			}
			continue
		}
		g := got[0]
		if g.User != c.user || g.Password != c.password || g.Host != c.host {
			t.Errorf("URLCredentials(%q)[0] = %+v", c.in, g)
		}
		if c.in[g.Offset:g.Offset+len(g.URL)] != g.URL {
			t.Errorf("URLCredentials(%q): offset %d does not point at %q", c.in, g.Offset, g.URL)
		}
		if !LooksSecretValue(c.in) {
			t.Errorf("LooksSecretValue(%q) = false", c.in)
		}
		masked := MaskURL(c.in)
		if strings.Contains(masked, c.password) && len(c.password) > 3 {
			t.Errorf("MaskURL(%q) = %q still holds the password", c.in, masked)
		}
		if !strings.Contains(masked, c.user+":") || !strings.Contains(masked, "@"+c.host) {
			t.Errorf("MaskURL(%q) = %q lost the user or host", c.in, masked)
		}
	}
}

func TestLooksSecretValue(t *testing.T) {
	yes := []string{"ghp_" + strings.Repeat("a", 36), "github_pat_" + strings.Repeat("B", 30), "AKIA" + strings.Repeat("Z", 16),
		"sk-" + strings.Repeat("q", 40), "xoxb-" + strings.Repeat("1", 20), "hf_" + strings.Repeat("k", 30),
		"-----BEGIN OPENSSH PRIVATE KEY-----"}
	no := []string{"", "/usr/local/cuda", "ghp_short", "sk-learn", "libnccl2=2.28.3-1+cuda13.0", "xterm", "AKIA",
		"task-" + strings.Repeat("q", 40), "-----BEGIN CERTIFICATE-----"}
	for _, v := range yes {
		if !LooksSecretValue(v) {
			t.Errorf("LooksSecretValue(%q) = false", v)
		}
	}
	for _, v := range no {
		if LooksSecretValue(v) {
			t.Errorf("LooksSecretValue(%q) = true", v)
		}
	}
}

// TestMask: a credential's mask shows none of the value's own characters,
// only a well-known format's prefix, which names the format; an exposure
// that is no credential (Abbrev) keeps a few to be recognised by.
func TestMask(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "(empty)"},
		{"x", "…(1 char)"},
		{"hunter2-secret", "…(14 chars)"},
		{"nsc-fake-4f2a9c7e1b", "…(19 chars)"},
		{"héllo wörld!", "…(12 chars)"},
		{"ghp_" + strings.Repeat("a", 36), "ghp_…(40 chars)"},
		{"github_pat_" + strings.Repeat("b", 30), "github_pat_…(41 chars)"},
		{"xoxb-123456789012-abcdefghij", "xoxb-…(28 chars)"},
		{"xox", "…(3 chars)"},  // no token goes on past the prefix
		{"ghp_", "…(4 chars)"}, // the prefix alone is the value
		{"sk-proj-abcdefghijklmnopqrstu", "sk-…(29 chars)"},
		{"-----BEGIN PRIVATE KEY-----", "…(27 chars)"}, // no Slack token for its fifth "-"
	} {
		if got := Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "(empty)"},
		{"x", "…(1 char)"},
		{"abc", "…(3 chars)"},
		{"abcd", "a…(4 chars)"},
		{"abcdefgh", "ab…(8 chars)"},
		{"/home/alice/work", "/ho…(16 chars)"},
		{"héllo wörld!", "hél…(12 chars)"},
		{"\x00\x01abcdefghij", "??a…(12 chars)"},
	} {
		if got := Abbrev(c.in); got != c.want {
			t.Errorf("Abbrev(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if maskFor(KindSecret, "hunter2-secret") != "…(14 chars)" || maskFor(KindCommand, "hunter2-secret") != "…(14 chars)" ||
		maskFor(KindEnv, "hunter2-secret") != "hun…(14 chars)" {
		t.Errorf("maskFor: a credential abbreviated, or an exposure masked whole")
	}
	// Whatever the length, the value itself never appears, nor any of a
	// credential's characters.
	for n := 1; n <= 64; n++ {
		v := strings.Repeat("q", n-1) + "Z" // letters no mask holds
		if m := Abbrev(v); strings.Contains(m, v) {
			t.Errorf("Abbrev(%q) = %q shows the whole value", v, m)
		}
		if m := Mask(v); strings.ContainsAny(m, "qZ") {
			t.Errorf("Mask(%q) = %q shows the value's characters", v, m)
		}
	}
}

func TestParseDeviceEnv(t *testing.T) {
	// A piece without NAME= belongs to the value before it.
	vars := ParseDeviceEnv("A=1;B=x;y;C=;D")
	want := []EnvVar{{"A", "1", true}, {"B", "x;y", true}, {"C", ";D", true}}
	if len(vars) != 3 {
		t.Fatalf("ParseDeviceEnv = %+v", vars)
	}
	for i := range want {
		if vars[i] != want[i] {
			t.Errorf("var %d = %+v, want %+v", i, vars[i], want[i])
		}
	}
	if got := FormatDeviceEnv(vars); got != "A=1;B=x;y;C=;D" {
		t.Errorf("FormatDeviceEnv = %q", got)
	}
}

// FuzzMaskSecrets: whatever the string, FindSecrets's results point at
// their values, in order and apart; MaskSecrets leaves none of the
// secrets FindSecrets finds in it (a short one may recur by chance, so only
// values of 8 bytes and more are checked), and masking twice changes nothing.
func FuzzMaskSecrets(f *testing.F) {
	f.Add("backup.sh --password=Backup-Pass-771")
	f.Add("./pinned --json out.json --password Run-Pass-552")
	f.Add("epoch ghp_n4M3n4M3n4M3n4M3n4M3n4M3 AKIAT8T8T8T8T8T8T8T8")
	f.Add("db postgres://app:pw123@db/x\x00SECRET_KEY=abc")
	for _, v := range []string{fakeAWSID + " " + fakeAWSSecret, fakeGoogle, fakeStripe, fakeJWT, "Bearer " + fakeBearer,
		fakeNpm, fakeGitHubPAT, fakeSlack, fakePEM, "password: hunter2", `{"token": "t-1a2b3c4d"}`, "a;Password=x;b"} {
		f.Add("range " + v + " end")
	}
	f.Fuzz(func(t *testing.T, s string) {
		found := FindSecrets(s)
		for i, sec := range found {
			if sec.Offset < 0 || sec.Offset+len(sec.Value) > len(s) || s[sec.Offset:sec.Offset+len(sec.Value)] != sec.Value {
				t.Fatalf("FindSecrets(%q): %+v does not point into the string", s, sec)
			}
			if i > 0 && found[i-1].Offset+len(found[i-1].Value) > sec.Offset {
				t.Fatalf("FindSecrets(%q): %+v and %+v overlap or are out of order", s, found[i-1], sec)
			}
		}
		masked := MaskSecrets(s)
		for _, sec := range FindSecrets(s) {
			if len(sec.Value) >= 8 && strings.Count(masked, sec.Value) >= strings.Count(s, sec.Value) {
				t.Fatalf("MaskSecrets(%q) = %q keeps %q", s, masked, sec.Value)
			}
		}
		if again := MaskSecrets(masked); again != masked {
			t.Fatalf("masking twice: %q -> %q", masked, again)
		}
	})
}

func TestInjectedByNsys(t *testing.T) {
	lib := "/opt/nvidia/nsight-systems/2025.3.1/target-linux-x64/"
	injected := [][2]string{
		{"QUADD_INJECTION_PROXY", "NVTX"}, {"QUADD_CUDA_CONFIG", "/tmp/injection_config_c404891a"}, {"QUADD_AGENT_PID", "1"},
		{"CUPTI_PROFILE_MODE", "_"}, {"NVTX_INJECTION64_PATH", lib + "libToolsInjection64.so"},
		{"TRACE_START_IMMEDIATELY", "0"}, {"__GL_CONSTANT_FRAME_RATE_HINT", "2"}, {"GL_CONSTANT_FRAME_RATE_HINT", "2"},
		{"LD_PRELOAD", lib + "libToolsInjectionProxy64.so:" + lib + "libLinuxKeyboardInterceptorProxy.so"},
		{"LD_PRELOAD", "{}"}, {"LD_PRELOAD", `"{}"`},
	}
	for _, v := range injected {
		if !InjectedByNsys(v[0], v[1]) {
			t.Errorf("InjectedByNsys(%s=%s) = false, want true", v[0], v[1])
		}
	}
	exposed := [][2]string{
		{"QUADD_API_TOKEN", "x"},                           // a secret name under nsys's prefix
		{"CUPTI_NOTE", "https://bob:hunter22@example.com"}, // a credential value
		{"LD_PRELOAD", lib + "libToolsInjectionProxy64.so:/home/bob/libmine.so"},
		{"LD_PRELOAD", "/home/bob/libToolsInjection.txt"}, {"LD_PRELOAD", ""},
		{"NVTX_INJECTION64_PATHX", "y"}, {"OMP_NUM_THREADS", "4"},
	}
	for _, v := range exposed {
		if InjectedByNsys(v[0], v[1]) {
			t.Errorf("InjectedByNsys(%s=%s) = true, want false", v[0], v[1])
		}
	}
	// The allowlist for the program's own environment is untouched.
	if AllowedEnv("QUADD_AGENT_PID", nil) || AllowedEnv("CUPTI_PROFILE_MODE", nil) {
		t.Error("nsys's variables must not be passed on to the profiled program by the allowlist")
	}
}

func TestChildOfProfiled(t *testing.T) {
	spans := []ThreadSpan{{PID: 22, MaxTID: 63}}
	for pid, want := range map[int64]bool{55: true, 56: true, 63: true, 22: false, 64: false, 4242: false, 11: false} {
		if got := ChildOfProfiled(pid, spans); got != want {
			t.Errorf("ChildOfProfiled(%d) = %v, want %v", pid, got, want)
		}
	}
	if ChildOfProfiled(55, nil) {
		t.Error("a child of nothing")
	}
}

func TestInNsysBlock(t *testing.T) {
	block := []byte("\xbe\x08QUADD_#\x02r_CONFIG\x98\x04\xf1\x0binjection_config_c404891a\x00\x01\x02\xf0\x05")
	if !InNsysBlock("PROFILE_MODE", "_", block) || !InNsysBlock("FEATURES", "1", block) {
		t.Error("fragments of nsys's block not recognised")
	}
	for _, c := range [][2]string{{"API_TOKEN", "x"}, {"NOTE", "long value here"}, {"X", "ghp_0123456789abcdefghij"}} {
		if InNsysBlock(c[0], c[1], block) {
			t.Errorf("InNsysBlock(%s=%s) = true", c[0], c[1])
		}
	}
	if InNsysBlock("FEATURES", "1", []byte("no marker here")) {
		t.Error("no marker, yet in the block")
	}
	far := append(append([]byte{}, block...), make([]byte, 2000)...)
	if InNsysBlock("FEATURES", "1", far) {
		t.Error("a marker 2000 bytes back still counts")
	}
}
