// Command bigcapture writes large captures for performance measurements:
// a scaled-up copy of a real Nsight Systems SQLite export among many
// unrelated calls, and its cuda_api_trace CSV report (the default), or a
// capture of many small async copies shaped like a real one of that size
// (-many); -shape prints what an export holds, in number, as JSON.
//
//	go run ./internal/bigcapture/cmd/bigcapture -n 1000000 -o /tmp/nsyscheck-bench
//	go run ./internal/bigcapture/cmd/bigcapture -many 600000 -csv -rule -o /tmp/nsyscheck-bench
//	go run ./internal/bigcapture/cmd/bigcapture -shape capture.sqlite
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
	mc := bigcapture.ManyConfig{}
	flag.StringVar(&cfg.Source, "source", "", "nsys SQLite export to scale up, only read (default "+bigcapture.DefaultSource+", with -many "+bigcapture.ManySource+")")
	flag.StringVar(&cfg.SourceCSV, "source-csv", "", "its cuda_api_trace CSV report (default: beside -source)")
	flag.StringVar(&cfg.OutDir, "o", "", "output `folder` (required; use one under /tmp)")
	flag.StringVar(&cfg.Name, "name", "", "base name of the outputs (default big-N, many-N)")
	flag.IntVar(&cfg.Runtime, "n", 1_000_000, "unrelated CUDA API rows to add")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flag.BoolVar(&cfg.NoCSV, "no-csv", false, "skip the CSV report")
	flag.IntVar(&mc.Copies, "many", 0, "write a capture of this many small async copies (a multiple of 1000) instead")
	flag.IntVar(&mc.StepEvery, "step", 0, "with -many: an NVTX range \"step\" around every `K` copy calls")
	flag.BoolVar(&mc.CSV, "csv", false, "with -many: also the nsys stats CSV reports, in a folder of their own")
	flag.BoolVar(&mc.Rule, "rule", false, "with -many: also NVIDIA's cuda_memcpy_async rule's CSV beside the export")
	shape := flag.String("shape", "", "print the shape of this `export` as JSON and exit")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	if *shape != "" {
		s, err := bigcapture.ShapeOf(*shape)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bigcapture:", err)
			os.Exit(1)
		}
		printJSON(s)
		return
	}
	if cfg.OutDir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: bigcapture -o FOLDER [-n ROWS | -many COPIES [-step K] [-csv] [-rule]] [-source FILE.sqlite]\n       bigcapture -shape FILE.sqlite")
		os.Exit(2)
	}
	if mc.Copies > 0 {
		mc.Source, mc.OutDir, mc.Name = cfg.Source, cfg.OutDir, cfg.Name
		if mc.Source == "" {
			mc.Source = bigcapture.ManySource
		}
		res, err := bigcapture.ManyCopies(mc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bigcapture:", err)
			os.Exit(1)
		}
		if *asJSON {
			printJSON(res)
			return
		}
		fmt.Printf("%s: %d bytes, %d copies in %d batches", res.SQLite, res.SQLiteBytes, res.Copies, res.Batches)
		if res.Steps > 0 {
			fmt.Printf(", %d step ranges", res.Steps)
		}
		fmt.Printf(" (%.2f s)\n", res.Elapsed.Seconds())
		if res.CSVDir != "" {
			fmt.Println("CSV reports:", res.CSVDir)
		}
		if res.RuleCSV != "" {
			fmt.Println("NVIDIA's rule:", res.RuleCSV)
		}
		return
	}
	if cfg.Source == "" {
		cfg.Source = bigcapture.DefaultSource
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
		printJSON(res)
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

func printJSON(v any) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
