package main

import "testing"

// adv20Cases: credentials in deleted rows, names and printed strings that
// the scan, scrub or the masking once missed.
func adv20Cases() []badCase {
	const group = "credentials the scan once missed"
	glued := []string{"S3cretPw99", "Hunter2Hunter2", "abcdef12345678", "S3cret99"}
	return []badCase{
		{group: group, name: "verify --fail-on-exposure: deleted strings whose record header's last byte glues itself to their first word (=curl -u USER:PASSWORD, ?--password X, 5token=X, =sudo mysql -pX; once none found: exit 0)",
			make: func(t *testing.T, dir string) []string {
				return append(deletedKept("curl -u bob:"+glued[0]+" x", "--password "+glued[1], "token="+glued[2], "sudo mysql -p"+glued[3]+" db")(t, dir), "--fail-on-exposure")
			},
			exit: 3, want: []string{"found in unused pages of the file", "4 of them credential-like", "password=…(10 chars) at offset", "token=…(14 chars) at offset"},
			never: glued},
	}
}

// deletedKept copies the shipped export, adds the strings to StringIds
// and deletes them, as deletedStrings does, with strings kept after them:
// their page stays full enough that SQLite does not rebuild it, and the
// deleted strings' bytes, the record header's before each, stay in it.
func deletedKept(strs ...string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		p := copyShipped(t, dir, "pinned.sqlite")
		copyShipped(t, dir, "pinned.results.json")
		db := openRW(t, p)
		db.SetMaxOpenConns(1)
		mustExec(t, db, `PRAGMA secure_delete = OFF`)
		for i, s := range strs {
			if _, err := db.Exec(`INSERT INTO StringIds (id, value) VALUES (?, ?)`, 990100+i, s); err != nil {
				t.Fatal(err)
			}
		}
		mustExec(t, db, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 59)
			INSERT INTO StringIds (id, value) SELECT 990400 + i, 'kept string number ' || i FROM n`)
		mustExec(t, db, `DELETE FROM StringIds WHERE id BETWEEN 990100 AND 990399`)
		db.Close()
		return []string{p}
	}
}
