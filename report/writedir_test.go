package report

import (
	"fmt"
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

// tree records every file under dir (content by name), and the folders.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setOfThree is an output folder with one capture folder that does not
// exist yet, one holding an earlier report (swapped whole), one holding a
// file of the user's too (files renamed in one by one), and the index
// beside them in the output folder itself.
func setOfThree(t *testing.T) (string, []Folder) {
	out := filepath.Join(t.TempDir(), "out")
	for _, f := range []struct{ path, data string }{
		{"x-2/" + MarkdownFile, "# b's earlier report\n"}, {"x-2/" + HTMLFile, "<p>b</p>\n"},
		{"x-3/" + MarkdownFile, "# c's earlier report\n"}, {"x-3/notes.txt", "the user's notes\n"},
		{IndexHTMLFile, "<p>earlier index</p>\n"},
	} {
		p := filepath.Join(out, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := []Folder{{Dir: filepath.Join(out, "x"), Files: someFiles()}, {Dir: filepath.Join(out, "x-2"), Files: someFiles()},
		{Dir: filepath.Join(out, "x-3"), Files: someFiles()},
		{Dir: out, Files: map[string][]byte{IndexHTMLFile: []byte("<p>index</p>\n"), IndexMarkdownFile: []byte("# index\n")}}}
	return out, set
}

// TestWriteSetFailureLeavesAllAsItWas: a set whose last folder cannot be
// put in place (the last rename fails) puts back the folders it had
// placed — the new one removed, the swapped one exchanged back, the files
// renamed into the user's folder replaced by the ones they replaced — and
// leaves no temporary folder; the same set then writes whole.
func TestWriteSetFailureLeavesAllAsItWas(t *testing.T) {
	for _, failAt := range []int{1, 3, 5, 6} {
		out, set := setOfThree(t)
		before := tree(t, out)
		n := 0
		renameFile = func(from, to string) error {
			if n++; n == failAt {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
			}
			return os.Rename(from, to)
		}
		_, err := WriteSet(set, true)
		renameFile = os.Rename
		if err == nil || !strings.Contains(err.Error(), "input/output error") || !strings.Contains(err.Error(), "left as it was") {
			t.Fatalf("rename %d failing: err = %v", failAt, err)
		}
		if after := tree(t, out); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("rename %d failing: the output changed\nbefore %v\nafter  %v", failAt, before, after)
		}
		if _, err := os.Stat(filepath.Dir(out)); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
			t.Errorf("beside the output folder: %v", entries)
		}
		if _, err := WriteSet(set, true); err != nil {
			t.Fatal(err)
		}
		after := tree(t, out)
		for _, want := range []string{"x/" + MarkdownFile, "x-2/" + MarkdownFile, "x-3/" + MarkdownFile, "x-3/notes.txt", IndexMarkdownFile} {
			if _, ok := after[want]; !ok {
				t.Errorf("the set written whole lacks %s: %v", want, after)
			}
		}
		if after["x-2/"+MarkdownFile] != "# md\n" || after["x-3/notes.txt"] != "the user's notes\n" {
			t.Errorf("the set written whole: %v", after)
		}
		for p := range after {
			if strings.Contains(p, tmpPrefix) || strings.Contains(p, setAsidePrefix) {
				t.Errorf("left behind: %s", p)
			}
		}
	}
}

// TestWriteSetStagingFailure: a full disk while the second folder is
// written leaves every folder as it was, and a new output folder the set
// created is removed.
func TestWriteSetStagingFailure(t *testing.T) {
	n := 0
	createFile = func(path string) (*os.File, error) {
		if n++; n == 5 {
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
		}
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	}
	defer func() {
		createFile = func(path string) (*os.File, error) {
			return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		}
	}()
	out, set := setOfThree(t)
	before := tree(t, out)
	if _, err := WriteSet(set, true); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("err = %v, want the full disk", err)
	}
	if after := tree(t, out); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the output changed\nbefore %v\nafter  %v", before, after)
	}
	n = 0
	fresh := filepath.Join(t.TempDir(), "new", "out")
	if _, err := WriteSet([]Folder{{Dir: filepath.Join(fresh, "a"), Files: someFiles()}, {Dir: filepath.Join(fresh, "b"), Files: someFiles()}}, false); err == nil {
		t.Fatal("no error from the full disk")
	}
	if _, err := os.Stat(filepath.Dir(fresh)); err == nil {
		t.Errorf("the folders the set made are still there")
	}
}

// TestWriteFilesDanglingLink: an output folder that is, or lies under, a
// link to nothing is refused naming the link and where it points (once
// "cannot move the report into DIR: not a directory", or "cannot create
// DIR: file exists"), and nothing is made where it points.
func TestWriteFilesDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link, target := filepath.Join(dir, "out"), filepath.Join(dir, "gone")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{link, filepath.Join(link, "sub", "deeper")} {
		_, err := writeFiles(out, someFiles(), true)
		if err == nil || !strings.Contains(err.Error(), link+" is a link to "+target+", which does not exist: create that folder first") {
			t.Errorf("%s: %v", out, err)
		}
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was made: %v", err)
	}
}
