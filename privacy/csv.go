package privacy

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/nsyscsv"
)

// csvDistinct bounds how many distinct values of one column ScanCSV
// remembers as searched already: API and thread names repeat on every row,
// so that most rows cost a map look-up, while memory stays bounded whatever
// the file's length.
const csvDistinct = 4096

// csvRemembered is the longest value ScanCSV remembers (longer ones are
// searched on every row they appear in).
const csvRemembered = 256

// ScanCSV reports the credentials an `nsys stats` CSV report carries: the
// secret detector (FindSecrets) runs over its column names and over every
// value that is not a number (API, kernel, NVTX range and thread names,
// memory kinds, devices), each finding placed at its file, row and column.
// A file that cannot be read or parsed whole is an error beside what the
// rows read so far hold, so that a caller fails closed. ScanCSV never
// writes to the file.
func ScanCSV(ctx context.Context, path string) (*Report, error) {
	r := &Report{Path: path, Format: "csv"}
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the report", Err: err, Hint: "check the path; export the CSV reports again"}
	}
	defer f.Close()
	cr := csv.NewReader(nsyscsv.BoundedReader(f))
	cr.FieldsPerRecord, cr.ReuseRecord = -1, true
	covered := map[string]bool{}
	base := filepath.Base(path)
	var header []string
	var seen []map[string]bool
	for row := 1; ; row++ {
		if row%4096 == 0 && ctx.Err() != nil {
			return r, ctx.Err()
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.sort()
			var ee *inputerr.EncodingError
			if errors.As(err, &ee) {
				return r, inputerr.NotUTF8(path, ee, "make the report again with nsys stats --format csv")
			}
			return r, &inputerr.Error{Path: path, Where: fmt.Sprintf("row %d", row), Problem: "cannot be read as CSV, so it was not scanned whole for secrets",
				Err: err, Hint: "export the CSV reports again (nsys stats --format csv)"}
		}
		if header == nil {
			header = append([]string(nil), rec...)
			for i, name := range header {
				for _, sec := range FindSecrets(name) {
					r.addSecretOnce(covered, KindSecret, sec, fmt.Sprintf("%s column %d name", base, i+1))
				}
			}
			continue
		}
		for i, v := range rec {
			if v == "" || isCSVNumber(v) {
				continue
			}
			for len(seen) <= i {
				seen = append(seen, map[string]bool{})
			}
			if seen[i][v] {
				continue
			}
			if len(seen[i]) < csvDistinct && len(v) <= csvRemembered {
				seen[i][strings.Clone(v)] = true // not the row's whole line
			}
			col := fmt.Sprintf("column %d", i+1)
			if i < len(header) {
				col = "column " + header[i]
			}
			for _, sec := range FindSecrets(v) {
				r.addSecretOnce(covered, KindSecret, sec, fmt.Sprintf("%s row %d %s", base, row, col))
			}
		}
	}
	r.sort()
	return r, nil
}

// isCSVNumber reports whether a CSV value is a number as nsys writes them
// (12, -3, 4.5, 1e9): no secret is only digits.
func isCSVNumber(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}
