package nsyssqlite

import (
	"context"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/records"
)

// A rank of the real job whose export records a start no session can have
// (0 ns, before 1970, two starts, a NULL, no row) says why in
// Meta.SessionStartFault, with no start: it is not a capture that records
// none (no table, or no column: SessionStartNs 0 and no fault), which a
// CSV folder is too.
func TestSessionStart(t *testing.T) {
	const rank1 = "../testdata/captures/ddp-ranks/report.1.sqlite"
	const table = "TARGET_INFO_SESSION_START_TIME"
	cases := []struct {
		name  string
		stmts []string
		start int64
		fault string
	}{
		{"as captured", nil, 1796188822132762403, ""},
		{"0 ns", []string{`UPDATE ` + table + ` SET utcEpochNs = 0`}, 0,
			table + ".utcEpochNs holds 0 ns, a start at or before 1970"},
		{"-1 ns", []string{`UPDATE ` + table + ` SET utcEpochNs = -1`}, 0,
			table + ".utcEpochNs holds -1 ns, a start at or before 1970"},
		{"a second row a second later", []string{`INSERT INTO ` + table + ` SELECT utcEpochNs + 1000000000, utcTime, localTime FROM ` + table}, 0,
			table + ".utcEpochNs holds two different starts, 1796188822132762403 and 1796188823132762403 ns, where a session has one"},
		{"a NULL", []string{`UPDATE ` + table + ` SET utcEpochNs = NULL`}, 0, table + ".utcEpochNs is NULL in 1 of its 1 rows"},
		{"no row", []string{`DELETE FROM ` + table}, 0, table + " holds no row, where nsys writes the session's start"},
		{"no table", []string{`DROP TABLE ` + table}, 0, ""},
		{"no utcEpochNs column", []string{`ALTER TABLE ` + table + ` DROP COLUMN utcEpochNs`}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := rank1
			if tc.stmts != nil {
				p = fixture.SQLite(t, rank1, tc.stmts...)
			}
			var meta records.Meta
			h := records.Handler{Meta: func(m *records.Meta) error { meta = *m; return nil }, Op: func(*records.Op) error { return nil }}
			if _, err := Read(context.Background(), open(t, p), p, records.Selection{}, h); err != nil {
				t.Fatal(err)
			}
			if meta.SessionStartNs != tc.start || meta.SessionStartFault != tc.fault {
				t.Errorf("start %d, fault %q; want %d, %q", meta.SessionStartNs, meta.SessionStartFault, tc.start, tc.fault)
			}
		})
	}
}
