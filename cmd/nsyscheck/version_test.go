package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	setting := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install module@version", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"pseudo-version with revision", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261129101010-94a7079abcde"},
			Settings: setting("vcs.revision", "94a7079abcdef0123456789", "vcs.modified", "false")}, "v0.0.0-20261129101010-94a7079abcde (94a7079abcde)"},
		{"checkout with changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: setting("vcs.revision", "94a7079abcdef0123456789", "vcs.modified", "true")}, "devel 94a7079abcde+dirty"},
		{"no version at all", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel (built without version information: install a release with go install github.com/nsyscheck/nsyscheck/cmd/nsyscheck@latest, or build with make build)"},
		{"no build information", nil, "devel (no build information)"},
	} {
		if got := versionOf(tc.bi); got != tc.want {
			t.Errorf("%s: versionOf = %q, want %q", tc.name, got, tc.want)
		}
		if strings.Contains(versionOf(tc.bi), "(devel)") {
			t.Errorf("%s: the version shows Go's placeholder (devel)", tc.name)
		}
	}
}

// make install puts a working nsyscheck, its version stamped in, into
// PREFIX/bin.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	// A build of its own in its own folders: it runs beside the scripts.
	t.Parallel()
	tmp := t.TempDir()
	root := filepath.Join("..", "..")
	cmd := exec.Command("make", "-C", root, "install", "PREFIX="+filepath.Join(tmp, "prefix"), "BIN="+filepath.Join(tmp, "build"), "VERSION=v0.0.0-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(tmp, "prefix", "bin", "nsyscheck"), "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "nsyscheck version v0.0.0-test" {
		t.Errorf("installed nsyscheck --version: %q, %v", out, err)
	}
}
