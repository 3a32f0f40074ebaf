package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, ok, err := ReadOutput(write("a.json", `{"schemaVersion":"`+SchemaVersion+`","before":{"copies":7}}`))
	if !ok || err != nil || out.Before.Copies != 7 || out.Check != nil {
		t.Errorf("audit JSON: %+v %v %v", out, ok, err)
	}
	for _, p := range []string{write("r.json", `{"schemaVersion":"nsyscheck.results/v1"}`), write("a.txt", `{}`), filepath.Join(dir, "none.json")} {
		if _, ok, err := ReadOutput(p); ok || err != nil {
			t.Errorf("%s read as an audit: %v %v", p, ok, err)
		}
	}
	if _, ok, err := ReadOutput(write("b.json", `{"schemaVersion":"`+SchemaVersion+`"}`)); !ok || err == nil || !strings.Contains(err.Error(), `no "before"`) {
		t.Errorf("audit without before: %v %v", ok, err)
	}
}
