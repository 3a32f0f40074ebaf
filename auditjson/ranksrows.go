package auditjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/ranks"
)

// rowsAgree refuses the table of a shard's JSON (raw, its "ranks" object)
// whose rows its own audits do not give: the rows the shard's ranks make
// alone, under the thresholds the table names, must be the rows it holds,
// number for number. The merge makes the job's rows from the audits again,
// so an edited row would otherwise be dropped without a word.
func rowsAgree(path string, raw json.RawMessage, audits []*audit.Audit, failed []Failed) error {
	var held struct {
		Thresholds ranks.Thresholds  `json:"thresholds"`
		Rows       []json.RawMessage `json:"rows"`
	}
	if len(raw) == 0 {
		return nil // no table, and so no rows to hold to the audits
	}
	if err := json.Unmarshal(raw, &held); err != nil {
		return fmt.Errorf("%s: ranks: a table that cannot be read: %w", path, err)
	}
	th := held.Thresholds
	if th == (ranks.Thresholds{}) {
		th = ranks.DefaultThresholds
	}
	in := make([]ranks.Audited, 0, len(audits)+len(failed))
	for _, au := range audits {
		in = append(in, ranks.Audited{Capture: au.Capture, Audit: au})
	}
	for _, f := range failed {
		in = append(in, ranks.Audited{Capture: f.Capture, Err: errors.New(f.Err)})
	}
	made := ranks.Summarize(in, th)
	byCapture := map[string][]int{}
	for i, r := range made.Rows {
		byCapture[r.Capture] = append(byCapture[r.Capture], i)
	}
	// What a row says of its peers is of the ranks it was written among;
	// the merge compares each rank with the job's ranks again.
	relative := map[string]bool{"peerNowMs": true, "peerPageableShare": true, "peers": true, "outlier": true}
	for i, rawRow := range held.Rows {
		var got map[string]json.RawMessage
		if err := json.Unmarshal(rawRow, &got); err != nil {
			return fmt.Errorf("%s: ranks.rows[%d]: a row that cannot be read: %w", path, i, err)
		}
		var capture string
		_ = json.Unmarshal(got["capture"], &capture)
		at := byCapture[capture]
		if len(at) == 0 {
			continue // ReadRanks names a row without its audit
		}
		byCapture[capture] = at[1:]
		b, err := json.Marshal(made.Rows[at[0]])
		if err != nil {
			return err
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil {
			return err
		}
		for k := range relative {
			delete(want, k)
			delete(got, k)
		}
		if key, g, w := firstDifference(got, want, false); key != "" {
			return fmt.Errorf("%s: ranks.rows[%d].%s of %s is %s, but the shard's audits give %s: the file was edited; write the audits again with nsyscheck audit --ranks --format json",
				path, i, key, capture, g, w)
		}
	}
	return nil
}

// firstDifference names the first key, in order, whose value differs
// between two JSON objects, held a and made b, with both values as
// written ("" where none differs). A key one object lacks is written as
// absent; a key a lacks is passed over unless all is true (a table's row
// read back may leave out what it need not say: the merge makes it again).
func firstDifference(a, b map[string]json.RawMessage, all bool) (key, got, want string) {
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		x, okx := a[k]
		y, oky := b[k]
		if (okx && oky && sameJSON(x, y)) || (!okx && !all) {
			continue
		}
		shown := func(v json.RawMessage, ok bool) string {
			if !ok {
				return "absent"
			}
			return string(bytes.TrimSpace(v))
		}
		return k, shown(x, okx), shown(y, oky)
	}
	return "", "", ""
}

// sameJSON reports whether two JSON values are one value: numbers equal
// as written, strings, objects and arrays alike whatever their spacing
// and the order of their keys.
func sameJSON(x, y json.RawMessage) bool {
	var vx, vy any
	dx := json.NewDecoder(bytes.NewReader(x))
	dx.UseNumber()
	dy := json.NewDecoder(bytes.NewReader(y))
	dy.UseNumber()
	if dx.Decode(&vx) != nil || dy.Decode(&vy) != nil {
		return false
	}
	return reflect.DeepEqual(vx, vy)
}
