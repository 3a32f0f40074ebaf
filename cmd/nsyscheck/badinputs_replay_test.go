package main

import (
	"path/filepath"
	"testing"
)

// replayCases: the records the replay's dependencies rest on
// (synchronisations, event recordings, graph launches, migrations) that
// contradict each other or name what nsys never writes, a check whose
// AFTER lacks a region BEFORE judged, and --expect files holding more than
// one value or values of no kind. Each is made from a shipped capture,
// damaged the way the row says.
func replayCases() []badCase {
	const expects = "audit rates and --expect files"
	// pipelineExpect writes body as the expectation of the shipped
	// pipeline-pageable export, copied into dir.
	pipelineExpect := func(body string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			e := filepath.Join(dir, "expect.json")
			writeFile(t, e, []byte(body))
			return append(pipelineEdit(`SELECT 1`)(t, dir), "--expect", e)
		}
	}
	return []badCase{
		{group: expects, name: "audit --expect with a second JSON object after the first", cmd: "audit",
			make: pipelineExpect(`{"copies": 192} {"copies": 5}`),
			exit: 2, want: []string{"expect.json", "more than one JSON value in the file"}},
		{group: expects, name: "verify --expect with text after the object",
			make: func(t *testing.T, dir string) []string {
				e := filepath.Join(dir, "expect.json")
				writeFile(t, e, []byte(`{"claims": {"1.floor": "held"}} {"claims": {"1.floor": "died"}}`))
				return []string{copyShipped(t, dir, "pinned.sqlite"), "--expect", e}
			},
			exit: 2, want: []string{"expect.json", "more than one JSON value in the file"}},
		{group: expects, name: "audit --expect with a region measure that is none (fortnight)", cmd: "audit",
			make: pipelineExpect(`{"regions": {"pass": {"measure": "fortnight"}}}`),
			exit: 2, want: []string{"expect.json", `regions.pass.measure: "fortnight" is none of median, span`}},
		{group: expects, name: "audit --expect with a region of -5 instances", cmd: "audit",
			make: pipelineExpect(`{"regions": {"pass": {"instances": -5}}}`),
			exit: 2, want: []string{"expect.json", "regions.pass.instances: -5 is no count"}},
		{group: expects, name: "audit --expect with a framework that is none (pytorchh)", cmd: "audit",
			make: pipelineExpect(`{"framework": "pytorchh"}`),
			exit: 2, want: []string{"expect.json", `framework: "pytorchh" is none of jax, pytorch, cupy, cuda-driver, cuda-runtime, unknown`}},
	}
}
