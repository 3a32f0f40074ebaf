package privacy

import (
	"math/rand"
	"strings"
	"testing"
)

// maskedPieces masks doc a piece at a time, as MaskWriter masks the
// pieces Pieces writes, and joins the masks.
func maskedPieces(t *testing.T, doc string, size int) (string, int) {
	t.Helper()
	var b strings.Builder
	n := 0
	if err := Pieces(doc, size, func(p string) error {
		b.WriteString(MaskSecrets(p))
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String(), n
}

const testKeyBody = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n" +
	"MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n" +
	"NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ\n"

// TestPiecesPrivateKey: a private key block that a cut at a line end
// would split goes out in one piece, masked whole; the pieces elsewhere
// still end at line ends near the size asked for.
func TestPiecesPrivateKey(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 200; i++ {
		b.WriteString("region step ok\n")
	}
	b.WriteString("-----BEGIN PRIVATE KEY-----\n" + testKeyBody + "-----END PRIVATE KEY-----\n")
	for b.Len() < 1000 {
		b.WriteString("region step ok\n")
	}
	doc := b.String()
	got, n := maskedPieces(t, doc, 210) // the first cut would fall in the key
	if want := MaskSecrets(doc); got != want {
		t.Fatalf("masked in pieces:\n%s\nmasked whole:\n%s", got, want)
	}
	if strings.Contains(got, "MIIEvQ") || strings.Contains(got, "NMoSfm") {
		t.Errorf("the key shows:\n%s", got)
	}
	if n < 3 {
		t.Errorf("%d pieces, want the document cut before and after the key", n)
	}
	// Cut at every line end instead, the key's lines are no key.
	var naive strings.Builder
	for _, l := range strings.SplitAfter(doc, "\n") {
		naive.WriteString(MaskSecrets(l))
	}
	if !strings.Contains(naive.String(), "NMoSfm") {
		t.Fatal("masked line by line the key is masked: the test shows nothing")
	}
}

// TestPiecesMaskAsWhole: documents made of words that detectors read
// across line ends (options and their values, curl -u, aws configure set,
// mysql -p, key blocks, access key ids), cut into pieces of every small
// size, mask as the document masked whole.
func TestPiecesMaskAsWhole(t *testing.T) {
	words := []string{"--password", "--token", "hunter2xyz", "curl", "-u", "bob:s3cretpw", "aws", "configure", "set",
		"aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "mysql", "-pS3cret99", "sudo", "A=1",
		"wandb", "login", "0123456789abcdef0123456789abcdef01234567", ";", "||", "&&", "step", "1.5", "-0.7%",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0B",
		"token=abc123def", "password:", "\"quoted value\"", "Bearer", "abcdefghijklmnop1234",
		"https://u:pw12345@host", "ghp_abcdefghijklmnopqrstuvwxyz0123", "AKIAIOSFODNN7EXAMPLE", "x", "time",
		"PASSWORD", "sk-", "-p", "'it''s'", "\\n", "machine", "login", "password", "default", "\"my", "phrase\"", "pw\"}", "sshpass", "redis-cli", "-a", "docker", "podman", "/usr/bin/sshpass"}
	seps := []string{" ", " ", " ", "\n", "\n", "\n\n", "\t", "\n  "}
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 3000; round++ {
		var b strings.Builder
		for k := r.Intn(60); k >= 0; k-- {
			w := words[r.Intn(len(words))]
			if w == "AKIAIOSFODNN7EXAMPLE" && r.Intn(4) != 0 {
				w = "step"
			}
			b.WriteString(w)
			b.WriteString(seps[r.Intn(len(seps))])
		}
		doc := b.String()
		want := MaskSecrets(doc)
		for _, size := range []int{1, 5, 17, 40} {
			if got, _ := maskedPieces(t, doc, size); got != want {
				t.Fatalf("pieces of %d of %q:\n%q\nmasked whole:\n%q", size, doc, got, want)
			}
			if WholeOnly([]byte(doc)) {
				continue
			}
			// Written in parts of any length, as an encoder writes.
			var b strings.Builder
			pw := &PieceWriter{W: writerFunc(func(p []byte) { b.WriteString(MaskSecrets(string(p))) }), Size: size}
			for rest := doc; rest != ""; {
				k := min(len(rest), 1+r.Intn(3*size))
				if _, err := pw.Write([]byte(rest[:k])); err != nil {
					t.Fatal(err)
				}
				rest = rest[k:]
			}
			if err := pw.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != want {
				t.Fatalf("written in parts, pieces of %d of %q:\n%q\nmasked whole:\n%q", size, doc, b.String(), want)
			}
		}
	}
}

// BenchmarkPieces cuts a JSON document of many regions' lines, as
// WriteJSON's writer hands it over, into pieces.
func BenchmarkPieces(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 32<<20; i++ {
		sb.WriteString(`      {"region": "step` + strings.Repeat("x", i%7) + `", "n": 600000, "time": "span", "now_ms": 3125.25},` + "\n")
	}
	doc := []byte(sb.String())
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for range b.N {
		if err := Pieces(doc, 64<<10, func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// writerFunc is a writer that hands each write to its function.
type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
