package privacy

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// regexRaw is the raw search as two regular expressions over all of data,
// the way it was first written; rawSearch must find the same.
func regexRaw(r *Report, data []byte) {
	type key = rawKey
	counts := map[key]int{}
	first := map[key]int64{}
	var order []key
	add := func(k Kind, name, value string, off int64) {
		kk := key{k, name, value, false}
		if _, ok := counts[kk]; !ok {
			order = append(order, kk)
			first[kk] = off
		}
		counts[kk]++
	}
	cleanEnd := func(end int) bool {
		return end >= len(data) || data[end] == 0 || data[end] == ';' || data[end] == '"'
	}
	var inSecret []span
	for _, m := range rawEnvRE.FindAllSubmatchIndex(data, -1) {
		v := EnvVar{Name: string(data[m[2]:m[3]]), Value: strings.TrimSuffix(string(data[m[4]:m[5]]), `"`), HasValue: true}
		off := int64(m[2])
		for _, g := range rawGlue {
			if rest, ok := strings.CutPrefix(v.Name, g); ok && len(rest) > 0 {
				v.Name = rest
				off += int64(len(g))
			}
		}
		if !cleanEnd(m[1]) && (len(v.Value) < 8 || !LooksSecretName(v.Name)) || v.Value == "" {
			continue
		}
		if k, ok := classify(v); ok {
			add(k, v.Name, v.Value, off)
			if k == KindSecret {
				inSecret = append(inSecret, span{int64(m[2]), int64(m[1])})
			}
		}
	}
	for _, m := range rawURLRE.FindAllIndex(data, -1) {
		u := string(data[m[0]:m[1]])
		if len(URLCredentials(u)) == 0 || strings.Contains(u, Redacted) {
			continue
		}
		i := sort.Search(len(inSecret), func(i int) bool { return inSecret[i].hi > int64(m[0]) })
		if i < len(inSecret) && inSecret[i].lo <= int64(m[0]) {
			continue
		}
		add(KindSecret, "", u, int64(m[0]))
	}
	for _, k := range order {
		r.Findings = append(r.Findings, Finding{Kind: k.kind, Name: k.name, Where: "raw bytes at offset " + strconv.FormatInt(first[k], 10),
			Offset: first[k], Masked: maskFor(k.kind, k.value), More: counts[k] - 1, value: k.value})
	}
}

// rawPieces are what random test data is made of: parts of names, values,
// separators, URLs and bytes that are not ASCII.
var rawPieces = []string{
	"A", "Z", "q", "_", "9", "=", "==", "\"", ";", "\x00", ":", "/", "@", "://", " ", "\n", "\t", "'",
	"\xff", "\x80", "\xc3\xa9", "\xe2\x82\xac", "\x7f", "+", ".", "-",
	"SECRET_TOKEN", "AWS_SECRET_ACCESS_KEY", "API_KEY", "PASSWORD", "PWD", "HOME", "USER", "NSC_NOTE", "LANG",
	"ENVIRONMENT_VARIABLE", "hunter2pw-77aa", "/home/alice", "value-12345678",
	"https", "postgres", "git+ssh", "me", "pw", "host.example.com", "x", Redacted,
}

func randomRaw(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		if rng.IntN(8) == 0 {
			b.WriteByte(byte(rng.IntN(256)))
			continue
		}
		b.WriteString(rawPieces[rng.IntN(len(rawPieces))])
	}
	return b.Bytes()
}

func TestRawSearchMatchesRegexps(t *testing.T) {
	defer func(w int64) { rawWindow = w }(rawWindow)
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for i := 0; i < 8000; i++ {
		data := randomRaw(rng, 1+rng.IntN(600))
		var want Report
		regexRaw(&want, data)
		found += len(want.Findings)
		for _, w := range []int64{1 << 20, 8, 64} {
			rawWindow = w
			var got Report
			if err := got.addRaw(context.Background(), bytes.NewReader(data), int64(len(data)), nil, nil); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Findings, want.Findings) {
				t.Fatalf("window %d, data %q:\ngot  %+v\nwant %+v", w, data, got.Findings, want.Findings)
			}
		}
	}
	if found < 1000 {
		t.Errorf("only %d findings in the random data; the test checks too little", found)
	}
}

// A string longer than the window is found whole.
func TestRawSearchLongValue(t *testing.T) {
	defer func(w int64) { rawWindow = w }(rawWindow)
	rawWindow = 64
	data := []byte("\x00\x01PREFIX\x00API_TOKEN=" + strings.Repeat("k", 5000) + "\x00tail postgres://u:" + strings.Repeat("p", 3000) + "@h/x")
	var want, got Report
	regexRaw(&want, data)
	if err := got.addRaw(context.Background(), bytes.NewReader(data), int64(len(data)), nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(want.Findings) != 2 || !reflect.DeepEqual(got.Findings, want.Findings) {
		t.Fatalf("got %+v\nwant %+v", got.Findings, want.Findings)
	}
}

// A .nsys-rep stores environment blocks compressed: a later copy of
// CUDA_VERSION=13.0.2 can appear as "VERSION=13.0.2" after a back-reference
// (seen in testdata/captures/h200-run/pinned.nsys-rep). That tail of an
// allowed variable is not an exposure; the same name with another value is.
func TestScanNsysRepCompressedTail(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(nsysdb.NsysRepMagic + " 1.\n\x0b\x02")
	b.WriteString("PATH=/usr/bin\x00CUDA_VERSION=13.0.2\x00HOME=/tmp\x00")
	b.WriteString("\x02\x1a\x00\xf2\x00VERSION=13.0.2\x00)\x00")
	b.WriteString("\x03\x11\x00\xf2\x00BUILD_VERSION=9.9.9\x00")
	p := filepath.Join(t.TempDir(), "tail.nsys-rep")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if f := find(r, KindEnv, "VERSION", false); len(f) != 0 {
		t.Errorf("the tail of CUDA_VERSION reported: %+v", f)
	}
	if f := find(r, KindEnv, "BUILD_VERSION", false); len(f) != 1 {
		t.Errorf("BUILD_VERSION=9.9.9 (no allowed variable has that value) not reported: %+v", r.Findings)
	}
}
