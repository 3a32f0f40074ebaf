package main

import (
	"path/filepath"
	"testing"
)

// pairEdit copies the shipped before capture of a pair (name-pageable)
// into dir, runs stmt on the copy and returns the arguments of its check
// against the shipped capture after (name-pinned), NVIDIA's rule off.
func pairEdit(name, stmt string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		const captures = "../../testdata/captures/"
		p := filepath.Join(dir, name+"-pageable.sqlite")
		writeFile(t, p, readFile(t, captures+name+"-pageable/"+name+"-pageable.sqlite"))
		db := openRW(t, p)
		mustExec(t, db, stmt)
		recount(t, db)
		db.Close()
		return []string{p, captures + name + "-pinned/" + name + "-pinned.sqlite", "--nvidia-rule", "off"}
	}
}

// faults20Cases: missing data is never a pass, impossible data never held.
func faults20Cases() []badCase {
	return []badCase{
		{group: "audit", name: "audit BEFORE AFTER: BEFORE without its CUPTI_ACTIVITY_KIND_CUDA_EVENT table, its cross-stream waits unresolved (once held)", cmd: "audit",
			make: pairEdit("pipeline", `DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT`),
			exit: 1, want: []string{"UNAVAILABLE", "unavailable: the replay of warmup (2 waits) and pass (10 waits) rests on waits on an event",
				"the export has no CUPTI_ACTIVITY_KIND_CUDA_EVENT table", "nsys export --type sqlite"}},
		{group: "audit", name: "audit BEFORE AFTER: BEFORE's CUPTI_ACTIVITY_KIND_CUDA_EVENT table emptied (once held)", cmd: "audit",
			make: pairEdit("torch-prefetch", `DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT`),
			exit: 1, want: []string{"UNAVAILABLE", "the replay of warmup (6 waits) and step (60 waits) rests on waits on an event",
				"the export's CUPTI_ACTIVITY_KIND_CUDA_EVENT table is empty"}},
		{group: "audit", name: "audit BEFORE AFTER: BEFORE without its CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table, no wait naming its event (once held)", cmd: "audit",
			make: pairEdit("pipeline", `DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`),
			exit: 1, want: []string{"UNAVAILABLE", "the replay of warmup (1 wait) and pass (5 waits) rests on waits on an event",
				"the export has no CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table, whose records name the event each wait waited for"}},
	}
}
