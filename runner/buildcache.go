package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/kernels"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// buildCachePath returns where a build of the bundled source with these nvcc
// arguments, by this nvcc, is cached (under the user cache folder), or "" when
// there is no cache folder. The key covers the source, the arguments and
// nvcc's path and version, so any change builds afresh.
func (r *Run) buildCachePath(args []string) string {
	base, err := os.UserCacheDir()
	if err != nil || r.Info.Nvcc == nil {
		return ""
	}
	h := sha256.New()
	h.Write(kernels.PinnedSource)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s", strings.Join(args, "\x00"), r.Info.Nvcc.Path, r.Info.Nvcc.Version)
	return filepath.Join(base, "nsyscheck", "build", hex.EncodeToString(h.Sum(nil))[:24], runinfo.Base)
}

// storeBuild keeps the run's program for later runs; failing to is harmless.
func (r *Run) storeBuild(cached string) {
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		return
	}
	_ = copyExecutable(r.Path(runinfo.Base), cached)
}

// copyExecutable copies src to dst through a temporary name, so a reader
// never sees half a file.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-"+filepath.Base(dst)+"-")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
