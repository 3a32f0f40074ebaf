package privacy

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// trainSQLite is a real capture of a PyTorch DataLoader training loop: nsys
// injected its libraries into python3 (pid 22), which forked two
// DataLoader workers (pid 55, 56).
var trainSQLite = filepath.Join("..", "testdata", "captures", "train-pageable", "train-pageable.sqlite")

func TestTrainCaptureExposesNothing(t *testing.T) {
	for _, p := range []string{trainSQLite, filepath.Join("..", "testdata", "captures", "train-pageable", "train-pageable.nsys-rep")} {
		r, err := ScanPath(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			t.Errorf("%s: %s %s at %s (%s): nsys's own variables and the application's children are not exposures",
				p, f.Kind, f.Name, f.Where, f.Masked)
		}
	}
}

func TestTrainCaptureSecretsStillFound(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "train.sqlite")
	if err := copyFile(trainSQLite, nil, dst); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(dst, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	block := "QUADD_INJECTION_PROXY=NVTX\x00QUADD_API_TOKEN=abcdefgh12345678\x00" +
		"LD_PRELOAD=/opt/nvidia/libToolsInjectionProxy64.so:/home/bob/libspy.so\x00CUPTI_PROFILE_MODE=_"
	for _, q := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO StringIds (id, value) VALUES (990001, ?)`, []any{block}},
		// a process started before the profiled one: not its child
		{`INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, 9, 'sshd')`, []any{int64(1)<<48 | 9<<24}},
	} {
		if _, err := db.Exec(q.q, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	r, err := ScanPath(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Kind{}
	for _, f := range r.Findings {
		if !f.Unused {
			got[f.Name] = f.Kind
		}
	}
	want := map[string]Kind{"QUADD_API_TOKEN": KindSecret, "LD_PRELOAD": KindEnv, "sshd": KindProcess}
	for n, k := range want {
		if got[n] != k {
			t.Errorf("%s: found as %q, want %q (all: %v)", n, got[n], k, got)
		}
	}
	for _, n := range []string{"QUADD_INJECTION_PROXY", "CUPTI_PROFILE_MODE", "pt_data_worker"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s reported: %v", n, got)
		}
	}
}
