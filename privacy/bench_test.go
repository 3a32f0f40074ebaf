package privacy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
)

// BenchmarkScan1M scans a capture with 1M added CUDA API rows (about
// 42 MiB), the way verify does before it loads the capture. Run with
// -benchmem; peak RSS of a whole verify is measured by internal/perfbench.
func BenchmarkScan1M(b *testing.B) {
	res, err := bigcapture.Generate(bigcapture.Config{Source: filepath.Join("..", bigcapture.DefaultSource),
		OutDir: b.TempDir(), Runtime: 1_000_000, Seed: 1, NoCSV: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(res.SQLiteBytes)
	b.ResetTimer()
	for b.Loop() {
		r, err := ScanPath(context.Background(), res.SQLite)
		if err != nil {
			b.Fatal(err)
		}
		if !r.Clean() {
			b.Fatalf("%d findings in a clean capture", len(r.Findings))
		}
	}
}

// BenchmarkFindSecretsRepeats runs the detector over 1 MiB strings that
// repeat one piece of a credential format: every detector reads each byte
// a bounded number of times, so each takes time in proportion to the
// string's length (a pass that rescanned from every separator or prefix
// took minutes here).
func BenchmarkFindSecretsRepeats(b *testing.B) {
	for _, unit := range []string{"token=", "token=$", "token='", "password=\"", "password: x ", "a:",
		"-----BEGIN RSA PRIVATE KEY-----", "eyJ.", "-eyJ", "Bearer ", "AKIAIOSFODNN7EXAMPLE ", "xox-", "x"} {
		s := strings.Repeat(unit, (1<<20)/len(unit))
		b.Run(strings.NewReplacer(" ", "_", "\"", "dq", "'", "sq").Replace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				FindSecrets(s)
			}
		})
	}
}
