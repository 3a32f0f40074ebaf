package main

import (
	"strings"
	"testing"
)

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
		{group: group, name: "verify --fail-on-exposure: deleted strings holding curl -H \"Bearer TOKEN\" and curl --oauth2-bearer TOKEN (once none found in the unused pages, though found in a live string: exit 0)",
			make: func(t *testing.T, dir string) []string {
				return append(deletedKept(`curl -H "Bearer abcdef0123456789ABCDEFghijkl" https://api.example.com/v1/models`,
					"curl --oauth2-bearer Zyxwvu9876543210ZYXWVUtsrqpo https://api.example.com/v1/models")(t, dir), "--fail-on-exposure")
			},
			exit: 3, want: []string{"found in unused pages of the file", "2 of them credential-like", "oauth2-bearer=…(28 chars) at offset", "(token)=…(28 chars) at offset"},
			never: []string{"abcdef0123456789ABCDEFghijkl", "Zyxwvu9876543210ZYXWVUtsrqpo"}},
		{group: group, name: "verify --fail-on-exposure: a passphrase of several words in quotes (--password \"my secret phrase\"), a .netrc entry's password and mysql -pX in a JSON string (once the words after the first shown, the others not found: exit 0)",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (99990, 'backup --password "my secret phrase" now'),
					(99991, 'machine api.example.com login bob password N3trcPw77'), (99992, '{"cmd": "mysql -pJs0nMyPw1"}')`)(t, dir), "--fail-on-exposure")
			},
			exit: 3, want: []string{"secret password=…(16 chars) in table StringIds", "secret password=…(9 chars) in table StringIds", "password=…(9 chars)"},
			never: []string{"secret phrase", "N3trcPw77", "Js0nMyPw1"}},
		{group: group, name: "verify --fail-on-exposure: sshpass -p PASSWORD, redis-cli -a PASSWORD and docker login -p PASSWORD in the strings, beside ssh -p PORT and docker run -p PORTS (once none found: exit 0)",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (99990, 'sshpass -p Ssh9Pw11 ssh -p 2222 host'),
					(99991, 'redis-cli -h cache -p 6379 -a R3disPw99 ping'), (99992, 'docker login -u bob -p D0ckerPw77 registry.example.com'),
					(99993, 'docker run -p 8080:80 nginx')`)(t, dir), "--fail-on-exposure")
			},
			exit: 3, want: []string{"secret password=…(8 chars) in table StringIds", "secret password=…(9 chars) in table StringIds", "secret password=…(10 chars) in table StringIds"},
			never: []string{"Ssh9Pw11", "R3disPw99", "D0ckerPw77", "…(4 chars) in table StringIds", "…(5 chars) in table StringIds"}},
		{group: group, name: "verify: the program's results JSON beside the capture holding --password X in its source (once the value taken with its closing quote and comma: …(14 chars))",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				r := copyShipped(t, dir, "pinned.results.json")
				writeFile(t, r, []byte(strings.Replace(string(readFile(t, r)), `"source": "pinned.cu results"`, `"source": "pinned.cu results --password JsonSrcPw123"`, 1)))
				return []string{p}
			},
			exit: 0, want: []string{"secret password=…(12 chars) in pinned.results.json line"},
			never: []string{"JsonSrcPw123", "…(14 chars)"}},
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
