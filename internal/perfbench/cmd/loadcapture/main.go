// Command loadcapture loads one capture through the capture package, the way
// `nsyscheck verify` does, evaluates the predictions, and prints what it read
// and how long each step took as one JSON line. perfbench runs it as a child
// process to measure the library alone (wall time and peak RSS), next to the
// nsyscheck binary, the sqlite3 shell and nsys stats.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
)

type report struct {
	Path       string  `json:"path"`
	Calls      int     `json:"calls"`
	Memcpys    int     `json:"memcpys"`
	Kernels    int     `json:"kernels"`
	Ranges     int     `json:"ranges"`
	LoadSec    float64 `json:"loadSec"`
	EvalSec    float64 `json:"evalSec"`
	AllHeld    bool    `json:"allHeld"`
	ScanSec    float64 `json:"scanSec,omitempty"` // privacy.Scan, as verify runs it on SQLite inputs
	HeapMiB    float64 `json:"heapMiB"`           // live heap after loading
	GOMAXPROCS int     `json:"gomaxprocs"`
}

func main() {
	sqlitePath := flag.String("sqlite", "", "nsys SQLite export to load with capture.LoadSQLite")
	csvDir := flag.String("csvdir", "", "folder of nsys stats CSV reports to load with capture.LoadCSVDir")
	all := flag.Bool("all", false, "load every API call, not only those the predictions read")
	thread := flag.Bool("thread", true, "load only the program's thread (capture.Options.ProgramThread), as verify does")
	eval := flag.Bool("eval", true, "evaluate the predictions after loading")
	scan := flag.Bool("scan", false, "also run privacy.Scan on the SQLite export, as verify does")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of loading and evaluating to `FILE`")
	memProfile := flag.String("memprofile", "", "write a heap profile taken after loading to `FILE`")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadcapture:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadcapture:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	opts := capture.Options{}
	if !*all {
		opts.APINames = predictions.Names()
	}
	opts.ProgramThread = *thread
	var (
		c    *capture.Capture
		err  error
		path string
	)
	t0 := time.Now()
	switch {
	case *sqlitePath != "" && *csvDir == "":
		path = *sqlitePath
		c, err = capture.LoadSQLite(path, opts)
	case *csvDir != "" && *sqlitePath == "":
		path = *csvDir
		c, err = capture.LoadCSVDir(path, opts)
	default:
		fmt.Fprintln(os.Stderr, "usage: loadcapture (-sqlite FILE | -csvdir DIR) [-all] [-thread=false] [-eval=false]")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadcapture:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	r := report{Path: path, Calls: len(c.Calls), Memcpys: c.Memcpys.Len(), Kernels: len(c.Kernels), Ranges: len(c.Ranges),
		LoadSec: time.Since(t0).Seconds(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadcapture:", err)
		}
	}
	if *eval {
		t1 := time.Now()
		res := predictions.Evaluate(c)
		r.EvalSec = time.Since(t1).Seconds()
		r.AllHeld = res.AllHeld()
	}
	if *scan && *sqlitePath != "" {
		t2 := time.Now()
		if _, err := privacy.ScanPath(context.Background(), *sqlitePath); err != nil {
			fmt.Fprintln(os.Stderr, "loadcapture:", err)
			os.Exit(1)
		}
		r.ScanSec = time.Since(t2).Seconds()
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
}
