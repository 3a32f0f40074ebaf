// Package nsyscheck holds what the nsyscheck binary ships besides its code:
// a real capture to verify on a machine that has none of its own.
package nsyscheck

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ShippedName names the capture Shipped holds.
const ShippedName = "h200-pinned"

//go:embed testdata/captures/h200-pinned/pinned.sqlite testdata/captures/h200-pinned/pinned.results.json testdata/captures/h200-pinned/pinned.transcript.txt
var shipped embed.FS

// WriteShipped writes the shipped capture (SQLite export, results JSON and
// transcript of a real H200 run) into a new folder under parent and returns
// that folder.
func WriteShipped(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "nsyscheck-shipped-")
	if err != nil {
		return "", fmt.Errorf("unpack the shipped capture: %w", err)
	}
	dir = filepath.Join(dir, ShippedName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("unpack the shipped capture: %w", err)
	}
	root := "testdata/captures/" + ShippedName
	err = fs.WalkDir(shipped, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := shipped.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, d.Name()), data, 0o444)
	})
	if err != nil {
		return "", fmt.Errorf("unpack the shipped capture: %w", err)
	}
	return dir, nil
}
