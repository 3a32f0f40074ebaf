package nsysdb

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Magic bytes at the start of the files nsys writes.
const (
	SQLiteMagic  = "SQLite format 3\x00"          // every SQLite 3 database
	NsysRepMagic = "NVIDIA Tegra Profiler Report" // a .nsys-rep (and older .qdrep)
)

// Kind is what an input file holds.
type Kind int

// The kinds of input file.
const (
	KindUnknown Kind = iota
	KindNsysRep      // an Nsight Systems report
	KindSQLite       // its SQLite export
	KindJSON         // a results JSON or measurements file
	KindCSV          // one `nsys stats` CSV report
	KindText         // anything else: read as the program's transcript
)

// String names the kind as the command line and JSON output do.
func (k Kind) String() string {
	switch k {
	case KindNsysRep:
		return "nsys-rep"
	case KindSQLite:
		return "sqlite"
	case KindJSON:
		return "json"
	case KindCSV:
		return "csv"
	case KindText:
		return "text"
	}
	return "unknown"
}

// Head returns up to n bytes from the start of the file.
func Head(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:k], nil
}

// HeadSize is how many bytes Magic and Sniff need to see.
const HeadSize = len(NsysRepMagic)

// Magic tells an SQLite database or an Nsight Systems report by its first
// bytes alone; anything else is KindUnknown.
func Magic(head []byte) Kind {
	switch {
	case bytes.HasPrefix(head, []byte(SQLiteMagic)):
		return KindSQLite
	case bytes.HasPrefix(head, []byte(NsysRepMagic)):
		return KindNsysRep
	}
	return KindUnknown
}

// IsReportName reports whether name ends as an Nsight Systems report's does
// (.nsys-rep, or .qdrep before 2021).
func IsReportName(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, ".nsys-rep") || strings.HasSuffix(l, ".qdrep")
}

// Sniff tells an input's kind from its first bytes and its name, the one
// rule by which every input is read: a report name, then the SQLite magic
// or a .sqlite name, then the report magic, then .json and .csv names;
// anything else is text (the program's transcript). A .nsys-rep or .sqlite
// name stands for its kind even when the content is damaged, so that the
// reader of that kind explains what is wrong with it.
func Sniff(name string, head []byte) Kind {
	l := strings.ToLower(filepath.Base(name))
	switch {
	case IsReportName(l):
		return KindNsysRep
	case Magic(head) == KindSQLite, strings.HasSuffix(l, ".sqlite"):
		return KindSQLite
	case Magic(head) == KindNsysRep:
		return KindNsysRep
	case strings.HasSuffix(l, ".json"):
		return KindJSON
	case strings.HasSuffix(l, ".csv"):
		return KindCSV
	}
	return KindText
}

// Detect reads the start of the file at path and tells its kind (Sniff).
func Detect(path string) (Kind, error) {
	head, err := Head(path, HeadSize)
	if err != nil {
		return KindUnknown, err
	}
	return Sniff(path, head), nil
}
