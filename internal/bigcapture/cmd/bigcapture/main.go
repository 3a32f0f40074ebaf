// Command bigcapture writes a scaled-up copy of a real Nsight Systems SQLite
// export, and its cuda_api_trace CSV report, for performance measurements.
//
//	go run ./internal/bigcapture/cmd/bigcapture -n 1000000 -o /tmp/nsyscheck-bench
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
)

func main() {
	cfg := bigcapture.Config{}
	flag.StringVar(&cfg.Source, "source", bigcapture.DefaultSource, "nsys SQLite export to scale up (only read)")
	flag.StringVar(&cfg.SourceCSV, "source-csv", "", "its cuda_api_trace CSV report (default: beside -source)")
	flag.StringVar(&cfg.OutDir, "o", "", "output `folder` (required; use one under /tmp)")
	flag.StringVar(&cfg.Name, "name", "", "base name of the outputs (default big-N)")
	flag.IntVar(&cfg.Runtime, "n", 1_000_000, "unrelated CUDA API rows to add")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flag.BoolVar(&cfg.NoCSV, "no-csv", false, "skip the CSV report")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	if cfg.OutDir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: bigcapture -o FOLDER [-n ROWS] [-source FILE.sqlite]")
		os.Exit(2)
	}
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("big-%d", cfg.Runtime)
	}
	res, err := bigcapture.Generate(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigcapture:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		return
	}
	fmt.Printf("%s: %d bytes (+%d API calls, +%d memcpys, +%d kernels, +%d NVTX ranges)\n",
		res.SQLite, res.SQLiteBytes, res.AddedRuntime, res.AddedMemcpy, res.AddedKernels, res.AddedNVTX)
	if res.CSV != "" {
		fmt.Printf("%s: %d bytes, %d rows\n", res.CSV, res.CSVBytes, res.CSVRows)
	}
	fmt.Printf("added calls: %d before, %d among, %d after the program's span [%d, %d] ns\n",
		res.Before, res.Among, res.After, res.LessonStart, res.LessonEnd)
	fmt.Printf("generated in %.2f s\n", res.Elapsed.Seconds())
}
