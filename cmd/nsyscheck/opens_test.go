package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// maxOpens is the most times one verify or one audit may open an SQLite
// export: the handle source holds (header, write lock, the exposure
// scan's bytes), the stream's connection, the connection the checks beside
// it and the exposure scan share, and the stream's batch connection
// (sqlitefile.PoolSize).
const maxOpens = 4

// TestOpensOfAnExport runs verify and audit, as a user does, on every
// shipped SQLite export and counts how often each opens it: every open of
// an SQLite database goes through internal/sqlitefile, which counts them.
// The audit reads NVIDIA's rule's CSV where the capture has one beside it,
// and reads its copies a second time where the rule and it disagree (as
// on driver-pageable): the second read opens nothing new.
func TestOpensOfAnExport(t *testing.T) {
	exports, err := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", "*", "*.sqlite"))
	if err != nil || len(exports) < 20 {
		t.Fatalf("shipped exports: %d (%v)", len(exports), err)
	}
	// No nsys: NVIDIA's rule comes from the CSV beside a capture or not at
	// all, so that only this process opens the export.
	home := t.TempDir()
	env := environ.Env{"PATH=" + home, "HOME=" + home, "XDG_CACHE_HOME=" + home, "COLUMNS=80"}
	for _, path := range exports {
		for _, cmd := range []string{"verify", "audit"} {
			count, stop := sqlitefile.CountOpens()
			var out, errb bytes.Buffer
			// An audit may be refused (jax-nvtx holds no copy): the
			// export is read all the same.
			code := Main([]string{cmd, path}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Env: env})
			n := count(path)
			stop()
			// The handle, the stream's connection and its batch
			// connection at least: a count below that counts nothing.
			if n < 3 || n > maxOpens {
				t.Errorf("%s %s (exit %d) opened the export %d times, want 3 to %d; stderr: %s", cmd, path, code, n, maxOpens, errb.String())
			}
		}
	}
}
