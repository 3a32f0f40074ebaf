package capture

import (
	"context"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

// Options tune how an input is loaded.
type Options struct {
	// APINames, when not empty, limits the API calls loaded to these names
	// (without _vNNNN suffix), which keeps memory small on big captures.
	// Empty loads every call.
	APINames []string
	// ProgramThread, when set, loads the API calls of the program's thread
	// only: the thread with the most cudaMemcpyAsync calls, then the most
	// cudaMemcpy calls, then the most calls (counting the calls APINames
	// selects; ties go to the lower process, then thread id). GPU copies and
	// kernels are loaded only where they belong to a loaded call (kernels of
	// the program's process when the thread launched none through the
	// runtime API). Capture.OtherThreads counts the calls of the threads
	// left out. This keeps what a big capture loads to the program's own
	// records, whatever the other threads did.
	ProgramThread bool
	// Nsys is the nsys executable used to export a .nsys-rep; empty means
	// look it up ($NSYS, PATH, the usual install folders).
	Nsys string
	// CacheDir, when set, receives .nsys-rep exports instead of the folder
	// beside the report.
	CacheDir string
	// Env is the environment NSYS, PATH and the user's cache folder are
	// read from (nil: the process's).
	Env environ.Env
	// Context, when set, stops a running nsys export once cancelled (a
	// signal): nsys's process group is stopped and its temporary files
	// removed. Nil means never.
	Context context.Context
	// Watch, where it wants any kind, receives the records of a trace
	// beside the model's collector (records.Tee): what the capture cannot
	// show is gathered from the same stream (coverage.Watcher).
	Watch records.Handler
}

// context returns o.Context, or a context that is never cancelled.
func (o Options) context() context.Context {
	if o.Context != nil {
		return o.Context
	}
	return context.Background()
}

// sourceOptions are the options source.Open takes: where nsys and the
// export cache are, and the kind to read the input as (KindUnknown: the
// one its content and name tell).
func (o Options) sourceOptions(kind nsysdb.Kind) source.Options {
	return source.Options{Nsys: o.Nsys, CacheDir: o.CacheDir, Env: o.Env, Kind: kind}
}
