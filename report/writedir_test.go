package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func someFiles() map[string][]byte {
	return map[string][]byte{MarkdownFile: []byte("# md\n"), HTMLFile: []byte("<p>html</p>\n"), "a.png": []byte("\x89PNG")}
}

// TestWriteFilesReplacesPlantedLink: a link planted in the output folder
// under a report's name is replaced, never written through.
func TestWriteFilesReplacesPlantedLink(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(t.TempDir(), "capture.sqlite")
	if err := os.WriteFile(input, []byte("the user's capture"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(input, filepath.Join(dir, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := writeFiles(dir, someFiles(), false); err == nil {
		t.Fatal("a link in the way was not refused without overwrite")
	}
	if _, err := writeFiles(dir, someFiles(), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(input); string(b) != "the user's capture" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(dir, HTMLFile)); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("report.html is not a regular file: %v %v", st, err)
	}
}

// TestWriteFilesFailureLeavesNothing: a write that fails half way (a full
// disk) leaves neither a partial report nor a temporary folder, and the
// message names the file once.
func TestWriteFilesFailureLeavesNothing(t *testing.T) {
	n := 0
	createFile = func(path string) (*os.File, error) {
		n++
		if n == 2 {
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
		}
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	}
	defer func() {
		createFile = func(path string) (*os.File, error) {
			return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		}
	}()
	parent := t.TempDir()
	for _, dir := range []string{filepath.Join(parent, "new"), parent} {
		n = 0
		_, err := writeFiles(dir, someFiles(), true)
		if err == nil || !strings.Contains(err.Error(), "no space left on device") {
			t.Fatalf("%s: err = %v, want the full disk", dir, err)
		}
		if c := strings.Count(err.Error(), filepath.Join(dir, HTMLFile)); c != 1 {
			t.Errorf("the message names the file %d times: %v", c, err)
		}
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestWriteFilesSweepsStale: a temporary folder a killed writer left is
// removed by the next write; one of a live process stays.
func TestWriteFilesSweepsStale(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(dir, tmpPrefix+strconv.Itoa(cmd.Process.Pid)+"-123")
	live := filepath.Join(dir, tmpPrefix+"1-456") // init
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, HTMLFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writeFiles(dir, someFiles(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead writer's folder stayed: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's folder was removed: %v", err)
	}
}

// TestWriteFilesMasksSecrets: a credential in a report's Markdown or JSON is
// masked.
func TestWriteFilesMasksSecrets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	token := "ghp_" + strings.Repeat("Ab3", 10)
	files := map[string][]byte{MarkdownFile: []byte("range " + token + "\n| cmd | --password=hunter2x |\n"), "verdicts.json": []byte(`{"thread": "` + token + `"}`)}
	if _, err := writeFiles(dir, files, false); err != nil {
		t.Fatal(err)
	}
	for n := range files {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), token) || strings.Contains(string(b), "hunter2x") {
			t.Errorf("%s holds a secret: %s", n, b)
		}
	}
}

// inode returns path's inode number.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// A folder holding only an earlier report (or nothing) is replaced in one
// atomic exchange: afterwards it is another folder (the written one) with
// the new files, and neither it nor its parent keeps a temporary folder or
// the old files. A folder with other files in it keeps them and is filled
// file by file.
func TestWriteFilesSwapsAReportFolderWhole(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	files := map[string][]byte{"report.md": []byte("# new\n"), "report.html": []byte("<p>new</p>\n")}
	for _, start := range []map[string]string{
		{"report.md": "# old\n", "report.html": "<p>old</p>\n"},
		{},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, c := range start {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := inode(t, dir)
		if _, err := writeFiles(dir, files, true); err != nil {
			t.Fatal(err)
		}
		if inode(t, dir) == before {
			t.Errorf("%d old files: the folder was filled file by file, not swapped whole", len(start))
		}
		for n, c := range files {
			if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != string(c) {
				t.Errorf("%s: %q, want %q", n, got, c)
			}
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Errorf("the parent holds %v, want only out", entries)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != len(files) {
			t.Errorf("the folder holds %v", entries)
		}
		if st, _ := os.Stat(dir); st.Mode().Perm() != 0o755 {
			t.Errorf("the folder's mode is %v, want the old one's 0755", st.Mode().Perm())
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}

	// A user's own file: kept, and the folder is the same one.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := inode(t, dir)
	if _, err := writeFiles(dir, files, false); err != nil {
		t.Fatal(err)
	}
	if inode(t, dir) != before {
		t.Error("a folder with the user's file in it was swapped")
	}
	if got, _ := os.ReadFile(notes); string(got) != "mine" {
		t.Errorf("the user's file holds %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the folder holds %v", entries)
	}
}
