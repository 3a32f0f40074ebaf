package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// TestOwnOutput: nsyscheck's own JSON outputs are told apart from the
// program's JSON by their start, where Open tells every input; Open refuses
// them as captures and OwnOutput says which they are.
func TestOwnOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, body string
		kind       string // "" where it is no output of ours
		legacy     bool
		inputs     []string
	}{
		{"verify.json", `{"schemaVersion": 1, "kind": "verify", "tool": {"name": "nsyscheck"}, "inputs": ["a.sqlite", "b"], "results": []}`, OutputVerify, false, []string{"a.sqlite", "b"}},
		{"audit.json", `{"schemaVersion": 1, "kind": "audit", "inputs": ["x"], "results": [{}]}`, OutputAudit, false, []string{"x"}},
		{"old-audit.json", `{"schemaVersion": "nsyscheck.audit/v1", "before": {"copies": 7}}`, OutputAudit, true, nil},
		{"sorted.json", `{"check": {"verdict": "held"}, "inputs": ["x", "y"], "kind": "audit", "results": [], "schemaVersion": 1}`, OutputAudit, false, []string{"x", "y"}},
		{"ranks.json", `{"schemaVersion": 1, "kind": "audit-ranks", "inputs": ["r0", "r1"], "results": []}`, OutputAuditRanks, false, []string{"r0", "r1"}},
		{"fleet.json", `{"schemaVersion": 1, "kind": "fleet"}`, "", false, nil},
		{"results.json", `{"device": "NVIDIA H200", "h2d": []}`, "", false, nil},
		{"list.json", `[1, 2]`, "", false, nil},
		{"verify.txt", `{"schemaVersion": 1, "kind": "verify"}`, "", false, nil},
	} {
		p := write(c.name, c.body)
		out, ok := OwnOutput(p)
		if ok != (c.kind != "") || ok && (out.Kind != c.kind || out.Legacy != c.legacy || strings.Join(out.Inputs, ",") != strings.Join(c.inputs, ",")) {
			t.Errorf("%s: OwnOutput = %+v, %v; want kind %q legacy %v inputs %v", c.name, out, ok, c.kind, c.legacy, c.inputs)
		}
		if c.kind == "" {
			continue
		}
		_, err := Open(context.Background(), p, Options{})
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), "nsyscheck "+c.kind+"'s own JSON output, not a capture") {
			t.Errorf("%s: Open: %v", c.name, err)
		}
	}
	if _, ok := OwnOutput(filepath.Join(dir, "missing.json")); ok {
		t.Error("a missing file is an output of ours")
	}
}
