package privacy

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/program"
)

// ScanText reports the credentials a text file carries line by line: the
// lesson program's own files beside a trace (its results JSON, its
// transcript), which verify reads and a user shares beside the capture.
// Each finding is placed at its file and line. A file that cannot be read
// whole is an error beside what the lines read so far hold, so that a
// caller fails closed. ScanText never writes to the file.
func ScanText(ctx context.Context, path string) (*Report, error) {
	r := &Report{Path: path, Format: "text"}
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the file", Err: err, Hint: "check the path"}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), program.MaxFile) // a results JSON may be one line
	covered := map[string]bool{}
	base := filepath.Base(path)
	line := 0
	for sc.Scan() {
		line++
		if line%4096 == 0 && ctx.Err() != nil {
			return r, ctx.Err()
		}
		for _, sec := range FindSecrets(sc.Text()) {
			r.addSecretOnce(covered, KindSecret, sec, fmt.Sprintf("%s line %d", base, line))
		}
	}
	r.sort()
	if err := sc.Err(); err != nil {
		return r, &inputerr.Error{Path: path, Where: fmt.Sprintf("line %d", line+1), Problem: "cannot be read, so it was not scanned whole for secrets", Err: err}
	}
	return r, nil
}
