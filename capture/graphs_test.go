package capture

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The copies a program did not issue through a copy call, read as the
// audit reads them from the real captures: a CUDA graph's copy nodes,
// joined to the graph's launch, and unified-memory migrations, named as
// such, from the SQLite export and from the CSV reports alike.

func capturePath(name, file string) string {
	return filepath.Join("..", "testdata", "captures", name, file)
}

// reportsOf copies a capture's per-record CSV reports into a folder of
// their own, so that it is read as reports rather than through its export.
func reportsOf(t *testing.T, name string) string {
	return copyFiles(t, capturePath(name, ""), name+"_cuda_api_trace.csv", name+"_cuda_gpu_trace.csv", name+"_nvtx_pushpop_trace.csv")
}

// sqlInt runs a query of one integer on an export, apart from the reader.
func sqlInt(t *testing.T, path, query string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestGraphNodeCopiesJoinTheirLaunch: graph-node traced each node of 30
// launches of a graph of copy in, kernel, copy back; every node copy comes
// with its cudaGraphLaunch call, from the export (with its node id) and
// from the reports (whose node ids are unknown), and the 10 eager copies
// with their cudaMemcpyAsync.
func TestGraphNodeCopiesJoinTheirLaunch(t *testing.T) {
	export := capturePath("graph-node", "graph-node.sqlite")
	wantNodes := sqlInt(t, export, `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
		ON r.correlationId = m.correlationId JOIN StringIds s ON s.id = r.nameId
		WHERE s.value LIKE 'cudaGraphLaunch%' AND m.graphNodeId IS NOT NULL`)
	if wantNodes != 60 {
		t.Fatalf("plain SQL: %d graph copies joined to a launch, want 60", wantNodes)
	}
	for _, in := range []struct {
		path string
		node func(int64) bool
	}{
		{export, func(n int64) bool { return n > 0 }},
		{reportsOf(t, "graph-node"), func(n int64) bool { return n == records.UnknownNode }},
	} {
		read, _, err := streamCopies(in.path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var nodes, eager int64
		for _, o := range read.ops {
			switch {
			case o.Kind != records.OpCopy:
			case o.Call == nil:
				t.Errorf("%s: copy without its call: %+v", in.path, o)
			case o.Call.Name == "cudaGraphLaunch":
				nodes++
				if !in.node(o.GraphNode) || o.Src == vocab.MemPageable || o.Dst == vocab.MemPageable {
					t.Errorf("%s: node copy %+v", in.path, o)
				}
			case o.Call.Name == "cudaMemcpyAsync":
				eager++
				if o.GraphNode != 0 {
					t.Errorf("%s: eager copy %+v", in.path, o)
				}
			}
		}
		if nodes != wantNodes || eager != 10 {
			t.Errorf("%s: %d node copies and %d eager, want %d and 10", in.path, nodes, eager, wantNodes)
		}
	}
}

// TestMigrationsNamed: the managed capture's copies are unified-memory
// migrations, each with its direction and, from the export, its cause; the
// reports give the directions alone, the cause as unknown.
func TestMigrationsNamed(t *testing.T) {
	export := capturePath("managed", "managed.sqlite")
	byCause := map[string]int64{}
	for cause, id := range map[string]int{"prefetch": 1, "fault": 2, "speculative": 3} {
		byCause[cause] = sqlInt(t, export, `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE migrationCause = `+string(rune('0'+id)))
	}
	htod := sqlInt(t, export, `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 11`)
	dtoh := sqlInt(t, export, `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 12`)
	if htod != 14334 || dtoh != 2496 {
		t.Fatalf("plain SQL: %d and %d migrations, want 14334 to the device and 2496 back", htod, dtoh)
	}
	for _, in := range []struct {
		path   string
		causes map[string]int64
	}{
		{export, byCause},
		{reportsOf(t, "managed"), map[string]int64{"unknown": htod + dtoh}},
	} {
		read, _, err := streamCopies(in.path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		dirs, causes := map[vocab.CopyKind]int64{}, map[string]int64{}
		for _, o := range read.ops {
			if o.Kind != records.OpCopy {
				continue
			}
			dirs[o.Copy]++
			causes[o.Migration]++
			if o.Call != nil {
				t.Errorf("%s: a migration with a call: %+v", in.path, o)
			}
		}
		if dirs[vocab.CopyHtoD] != htod || dirs[vocab.CopyDtoH] != dtoh || len(dirs) != 2 {
			t.Errorf("%s: directions %v, want %d HtoD and %d DtoH", in.path, dirs, htod, dtoh)
		}
		if len(causes) != len(in.causes) {
			t.Errorf("%s: causes %v, want %v", in.path, causes, in.causes)
		}
		for c, n := range in.causes {
			if causes[c] != n {
				t.Errorf("%s: %d migrations of cause %q, want %d (all: %v)", in.path, causes[c], c, n, causes)
			}
		}
	}
}
