package sqlitefile

import "github.com/nsyscheck/nsyscheck/internal/inputerr"

// works reports whether this build can read SQLite: the SQLite driver is C
// code linked through cgo, and a build without cgo (CGO_ENABLED=0, or no C
// compiler found) has only a stub that fails every query. Tests replace it.
var works = cgoEnabled

// NoCgoHint says how to get a build that reads SQLite.
const NoCgoHint = "install a C compiler (gcc: apt-get install gcc, dnf install gcc, or xcode-select --install) and build again " +
	"with CGO_ENABLED=1 (go build, make build or go install); meanwhile the nsys stats CSV reports, the program's transcript " +
	"or its results JSON can be verified without SQLite"

// errNoCgo is the error for an SQLite input in a build without cgo: the
// build lacks SQLite, the capture is fine.
func errNoCgo(path string) error {
	return &inputerr.Error{Path: path,
		Problem: "this nsyscheck was built without cgo (CGO_ENABLED=0), so it cannot read SQLite; the capture itself is not at fault",
		Hint:    NoCgoHint}
}

// Available returns nil when this build reads SQLite, else the error that
// says it was built without cgo, naming path.
func Available(path string) error {
	if works {
		return nil
	}
	return errNoCgo(path)
}
