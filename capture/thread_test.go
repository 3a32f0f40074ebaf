package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// progGtid is the global thread id of the reference capture's calls.
const progGtid = 281475345809430

// sqTwoThreads adds a second thread of the same process to the reference
// export: 30 cudaStreamSynchronize, 5 cudaMemcpyAsync (with a copy) and 2
// cudaLaunchKernel calls (with kernels), new correlation ids; the copy and
// kernels on streams of their own, as a second thread's would be.
func sqTwoThreads(t *testing.T) string {
	stmts := []string{`INSERT INTO StringIds (id, value) VALUES (9101, 'otherKernel')`}
	ins := func(corr int64, nameID int) {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
			(start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
			VALUES (%d, %d, 1, %d, %d, %d, 0)`, 400000000+corr*1000, 400000000+corr*1000+500, progGtid+1, corr, nameID))
	}
	corr := int64(10000)
	for i := 0; i < 30; i++ {
		corr++
		ins(corr, 59)
	}
	for i := 0; i < 5; i++ {
		corr++
		ins(corr, 58)
	}
	stmts = append(stmts, fmt.Sprintf(`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY
		SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY)`),
		fmt.Sprintf(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET correlationId = %d, streamId = 1001 WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY)`, corr),
		`INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (1001, 0, 1, 22, 1, 0, 2), (1002, 0, 1, 22, 1, 0, 2), (1003, 0, 1, 22, 1, 0, 2)`)
	for i := 0; i < 2; i++ {
		corr++
		ins(corr, 66)
		stmts = append(stmts, `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
			SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)`,
			fmt.Sprintf(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = %d, shortName = 9101, streamId = %d WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)`, corr, 1002+i))
	}
	return fixture.SQLite(t, refSQLite, stmts...)
}

var predictionAPIs = []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel"}

func TestLoadSQLiteProgramThread(t *testing.T) {
	p := sqTwoThreads(t)
	ref := sqLoad(t, refSQLite, Options{APINames: predictionAPIs})
	all := sqLoad(t, p, Options{APINames: predictionAPIs})
	if len(all.Calls) != len(ref.Calls)+37 || all.Memcpys.Len() != ref.Memcpys.Len()+1 || len(all.Kernels) != len(ref.Kernels)+2 {
		t.Fatalf("fixture: %d calls, %d copies, %d kernels", len(all.Calls), all.Memcpys.Len(), len(all.Kernels))
	}
	if len(all.OtherThreads) != 0 {
		t.Errorf("every thread loaded, yet OtherThreads = %v", all.OtherThreads)
	}

	c := sqLoad(t, p, Options{APINames: predictionAPIs, ProgramThread: true})
	pid, tid := nsysdb.SplitGlobalID(progGtid)
	for _, a := range c.Calls {
		if a.PID != pid || a.TID != tid {
			t.Fatalf("call of another thread loaded: %+v", a)
		}
	}
	// The program's thread exactly as before, its copies and kernels only.
	if !reflect.DeepEqual(c.Calls, ref.Calls) || !reflect.DeepEqual(c.Memcpys.Slice(), ref.Memcpys.Slice()) || !reflect.DeepEqual(c.Kernels, ref.Kernels) {
		t.Errorf("program thread: %d calls, %d copies, %d kernels; want %d, %d, %d",
			len(c.Calls), c.Memcpys.Len(), len(c.Kernels), len(ref.Calls), ref.Memcpys.Len(), len(ref.Kernels))
	}
	want := []records.ThreadCount{{PID: pid, TID: tid + 1, Calls: 37, MemcpyAsync: 5}}
	if !reflect.DeepEqual(c.OtherThreads, want) {
		t.Errorf("OtherThreads = %+v, want %+v", c.OtherThreads, want)
	}
	if c.Meta.GPU != ref.Meta.GPU || !reflect.DeepEqual(c.Ranges, ref.Ranges) {
		t.Errorf("GPU %q ranges %d", c.Meta.GPU, len(c.Ranges))
	}
	sqCheckSorted(t, c)

	// Counting every call: the other thread now has more calls but still
	// fewer cudaMemcpyAsync, so the program's thread is still chosen.
	c = sqLoad(t, p, Options{ProgramThread: true})
	if len(c.OtherThreads) != 1 || c.OtherThreads[0].Calls != 37 || len(c.Calls) != 444 {
		t.Errorf("no name filter: %d calls, OtherThreads %+v", len(c.Calls), c.OtherThreads)
	}

	// More cudaMemcpyAsync calls on the other thread make it the program's.
	p2 := sqTwoThreads(t)
	fixture.Exec(t, p2, fmt.Sprintf(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 58 WHERE globalTid = %d AND nameId = 59`, progGtid+1))
	c = sqLoad(t, p2, Options{APINames: predictionAPIs, ProgramThread: true})
	if len(c.Calls) != 37 || c.Calls[0].TID != tid+1 || c.Memcpys.Len() != 1 || len(c.Kernels) != 2 {
		t.Errorf("busier thread: %d calls (tid %d), %d copies, %d kernels", len(c.Calls), c.Calls[0].TID, c.Memcpys.Len(), len(c.Kernels))
	}
	if len(c.OtherThreads) != 1 || c.OtherThreads[0].TID != tid || c.OtherThreads[0].MemcpyAsync != 22 {
		t.Errorf("busier thread: OtherThreads %+v", c.OtherThreads)
	}
}

// A thread that launched no kernels through cudaLaunchKernel keeps its
// process's kernels, as the predictions read them then.
func TestLoadSQLiteProgramThreadNoLaunches(t *testing.T) {
	c := sqLoad(t, refSQLite, Options{APINames: []string{"cudaMemcpyAsync"}, ProgramThread: true})
	if len(c.Calls) != 22 || len(c.Kernels) != 28 || c.Memcpys.Len() != 22 {
		t.Errorf("%d calls, %d kernels, %d copies", len(c.Calls), len(c.Kernels), c.Memcpys.Len())
	}
}

func TestLoadCSVProgramThread(t *testing.T) {
	src, err := filepath.Glob(filepath.Join(refCSV2025, "*_cuda_api_trace.csv"))
	if err != nil || len(src) != 1 {
		t.Fatalf("reference trace: %v %v", src, err)
	}
	body, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	var extra strings.Builder
	for i := 0; i < 40; i++ {
		name := "cudaStreamSynchronize_v3020"
		if i%8 == 0 {
			name = "cudaMemcpyAsync_v3020"
		}
		fmt.Fprintf(&extra, "%d,100,%s,0,%d,22,23,20,\"other, thread\"\n", 400000000+i*1000, name, 20000+i)
	}
	dir := writeDir(t, map[string]string{"x_cuda_api_trace.csv": string(body) + extra.String()})
	ref, err := LoadCSVDir(refCSV2025, Options{APINames: predictionAPIs})
	if err != nil {
		t.Fatal(err)
	}
	all, err := LoadCSVDir(dir, Options{APINames: predictionAPIs})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Calls) != len(ref.Calls)+40 {
		t.Fatalf("fixture: %d calls", len(all.Calls))
	}
	c, err := LoadCSVDir(dir, Options{APINames: predictionAPIs, ProgramThread: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Calls, ref.Calls) {
		t.Errorf("program thread: %d calls, want %d", len(c.Calls), len(ref.Calls))
	}
	want := []records.ThreadCount{{PID: 22, TID: 23, Calls: 40, MemcpyAsync: 5}}
	if !reflect.DeepEqual(c.OtherThreads, want) {
		t.Errorf("OtherThreads = %+v, want %+v", c.OtherThreads, want)
	}

	// A damaged row on the other thread is reported as a plain load reports it.
	bad := string(body) + extra.String() + "x,100,cudaMemcpyAsync_v3020,0,1,22,23,20,t\n"
	dir = writeDir(t, map[string]string{"x_cuda_api_trace.csv": bad})
	_, err1 := LoadCSVDir(dir, Options{APINames: predictionAPIs})
	_, err2 := LoadCSVDir(dir, Options{APINames: predictionAPIs, ProgramThread: true})
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("errors differ:\n%v\n%v", err1, err2)
	}
}
