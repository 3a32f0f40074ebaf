package nsysrule

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadCSVShipped reads the rule's output shipped beside the PyTorch
// capture: every row, each field in its unit.
func TestReadCSVShipped(t *testing.T) {
	rows, err := ReadCSV("../testdata/captures/train-pinned/train-pinned" + fileSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want the file's 6", len(rows))
	}
	want := FlaggedCopy{Start: 3027914197, Duration: 4064, SrcKind: "Pageable", DstKind: "Device", MB: 0.074, PID: 22, API: "cudaMemcpyAsync_v3020", Sized: true}
	if rows[0] != want {
		t.Errorf("first row %+v, want %+v", rows[0], want)
	}
}

// TestReadCSVHeaders: the columns are found by their aliases in any order
// and unit; a time in µs is read as ns, a size in KB as MB.
func TestReadCSVHeaders(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x"+fileSuffix)
	csv := "PID,API Name,Bytes (KB),Src Kind,Dst Kind,Start (us),Duration (us)\n7,cudaMemcpyAsync,2048,Pageable,Device,1.5,0.25\n"
	if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	want := FlaggedCopy{Start: 1500, Duration: 250, SrcKind: "Pageable", DstKind: "Device", MB: 2.048, PID: 7, API: "cudaMemcpyAsync", Sized: true}
	if len(rows) != 1 || rows[0] != want {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

func TestReadCSVErrors(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo"+fileSuffix)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		path, want string
	}{
		{fifo, "read the cuda_memcpy_async rule's output: " + fifo + ": a FIFO"},
		{write("nostart.csv", "Duration (ns),PID\n1,2\n"), `no "Start (ns)" column`},
		{write("badpid.csv", "Start (ns),Duration (ns),PID\n1,2,x\n"), `data row 1: cannot read the cuda_memcpy_async rule's CSV: column "PID": "x" is not a process id`},
		// ParseFloat reads NaN, which no comparison refuses: a duration
		// that would be converted to -9223372036854775808 ns.
		{write("nanduration.csv", "Start (ns),Duration (ns),PID\n1,NaN,2\n"), `column "Duration (ns)": "NaN" is not a time`},
		{write("nanstart.csv", "Start (ns),Duration (ns),PID\n nan ,1,2\n"), `column "Start (ns)": "nan" is not a time`},
		{write("nanbytes.csv", "Start (ns),Duration (ns),PID,Bytes (MB)\n1,1,2,NaN\n"), `column "Bytes (MB)": "NaN" is not a size`},
		{write("short.csv", "Start (ns),Duration (ns),PID\n1,2\n"), "wrong number of fields"},
	} {
		_, err := ReadCSV(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", filepath.Base(c.path), err, c.want)
		}
	}
	if rows, err := ReadCSV(write("empty.csv", "\n")); err != nil || len(rows) != 0 {
		t.Errorf("an empty file: %v, %v", rows, err)
	}
}

func TestBeside(t *testing.T) {
	dir := t.TempDir()
	rule := filepath.Join(dir, "cap"+fileSuffix)
	if err := os.WriteFile(rule, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	exts := []string{".nsyscheck.sqlite", ".sqlite", ".nsys-rep"}
	for in, want := range map[string]string{
		filepath.Join(dir, "cap.sqlite"):           rule,
		filepath.Join(dir, "cap.nsyscheck.sqlite"): rule,
		filepath.Join(dir, "cap.nsys-rep"):         rule,
		filepath.Join(dir, "other.sqlite"):         "",
		dir:                                        rule,
	} {
		if got := Beside(in, exts); got != want {
			t.Errorf("Beside(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestRuleStandIn: the stand-in nsys the benchmarks run the audit with
// (testdata/programs/nsys-rule-standin.sh) writes, for every shipped
// capture with the real rule's output beside it, that output byte for byte.
func TestRuleStandIn(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("the stand-in needs the sqlite3 shell")
	}
	standIn, err := filepath.Abs("../testdata/programs/nsys-rule-standin.sh")
	if err != nil {
		t.Fatal(err)
	}
	csvs, _ := filepath.Glob("../testdata/captures/*/*" + fileSuffix)
	n := 0
	for _, want := range csvs {
		db := strings.TrimSuffix(want, fileSuffix) + ".sqlite"
		if _, err := os.Stat(db); err != nil {
			continue
		}
		a, err := Analyze(context.Background(), standIn, db, nil)
		if err != nil {
			t.Fatalf("%s: %v", db, err)
		}
		got, err := os.ReadFile(a.CSV)
		a.Close()
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(w) {
			t.Errorf("%s: the stand-in's CSV differs from nsys analyze's %s", db, want)
		}
		n++
	}
	if n < 20 {
		t.Errorf("%d shipped captures compared, want the 20 or more with the rule's output", n)
	}
}
