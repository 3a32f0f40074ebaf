package main

import (
	"path/filepath"
	"testing"
	"unicode/utf16"
)

// encodingCases: CSV reports, the transcript and the results file saved as
// UTF-16 (by a Windows editor, or PowerShell's > redirect), either byte
// order, with their byte-order mark or without; and a UTF-8 one, which
// reads. Each is made from the shipped capture; verify and audit answer
// alike.
func encodingCases() []badCase {
	const group = "text saved as UTF-16"
	off := []string{"--nvidia-rule", "off"}
	le := func(bom bool) func(string) string {
		return func(s string) string { return string(utf16Bytes(s, false, bom)) }
	}
	be := func(bom bool) func(string) string {
		return func(s string) string { return string(utf16Bytes(s, true, bom)) }
	}
	return []badCase{
		{group: group, name: "cuda_api_trace saved as UTF-16LE with its byte-order mark (PowerShell's >; once refused for a header of no known column)",
			make: csvEdit(le(true)),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv: the file is UTF-16LE text (with a byte-order mark), not UTF-8", "iconv -f UTF-16LE -t UTF-8"}},
		{group: group, name: "nvtx_sum saved as UTF-16BE without a byte-order mark",
			make: summaryRewrite("pinned_nvtx_sum.csv", be(false)),
			exit: 2, want: []string{"pinned_nvtx_sum.csv: the file is UTF-16BE text (without a byte-order mark), not UTF-8"}},
		{group: group, name: "audit: cuda_gpu_trace saved as UTF-16LE without a byte-order mark", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
				writeFile(t, p, utf16Bytes(string(readFile(t, p)), false, false))
				return append([]string{dir}, off...)
			},
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv: the file is UTF-16LE text"}},
		{group: group, name: "the transcript saved as UTF-16LE with its byte-order mark (once not an input nsyscheck reads)",
			make: reencoded("pinned.transcript.txt", le(true)),
			exit: 2, want: []string{"pinned.transcript.txt: the file is UTF-16LE text (with a byte-order mark)", "save it as UTF-8"}},
		{group: group, name: "the results JSON saved as UTF-16BE with its byte-order mark (once invalid JSON at byte 1)",
			make: reencoded("pinned.results.json", be(true)),
			exit: 2, want: []string{"pinned.results.json: the file is UTF-16BE text (with a byte-order mark)"}},
		{group: group, name: "a folder of the export and its results JSON saved as UTF-16LE (once set aside as another program's output)",
			make: func(t *testing.T, dir string) []string {
				copyShipped(t, dir, "pinned.sqlite")
				reencoded("pinned.results.json", le(true))(t, dir)
				return []string{dir}
			},
			exit: 2, want: []string{"pinned.results.json: the file is UTF-16LE text (with a byte-order mark)"}},
		{group: group, name: "audit --rates a run folder whose run.json was saved as UTF-16LE (once read as no run.json: whether the run completed unknown, its rates taken)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				run := t.TempDir()
				for _, name := range []string{"pinned.results.json", "run.json"} {
					writeFile(t, filepath.Join(run, name), readFile(t, filepath.Join("../../testdata/captures/h200-run", name)))
				}
				rj := filepath.Join(run, "run.json")
				writeFile(t, rj, utf16Bytes(string(readFile(t, rj)), false, true))
				return append([]string{p, "--rates", run}, off...)
			},
			exit: 2, want: []string{"run.json: the file is UTF-16LE text (with a byte-order mark)", "run it again"}},
		{group: group, name: "report of an audit's JSON saved as UTF-16LE (once read as a measurements file, invalid at byte 1)", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				code, out, stderr := runMain(t, []string{"audit", "../../testdata/captures/train-pageable", "--format", "json", "--nvidia-rule", "off"})
				if code != exitDied {
					t.Fatalf("audit of train-pageable: %d %s", code, stderr)
				}
				p := filepath.Join(dir, "audit.json")
				writeFile(t, p, utf16Bytes(out, false, true))
				return []string{p, "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"audit.json: the file is UTF-16LE text (with a byte-order mark)"}},
		{group: group, name: "the transcript with a UTF-8 byte-order mark (once its device line unread, the GPU unnamed)",
			make: reencoded("pinned.transcript.txt", func(s string) string { return "\ufeff" + s }),
			exit: 1, want: []string{"(program transcript), NVIDIA H200", "prediction 1  held"}},
	}
}

// reencoded copies the shipped file named into dir, rewritten by edit, and
// returns verify's arguments for it.
func reencoded(name string, edit func(string) string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		p := copyShipped(t, dir, name)
		writeFile(t, p, []byte(edit(string(readFile(t, p)))))
		return []string{p}
	}
}

// utf16Bytes encodes s as UTF-16, big- or little-endian, with its
// byte-order mark or without.
func utf16Bytes(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}
