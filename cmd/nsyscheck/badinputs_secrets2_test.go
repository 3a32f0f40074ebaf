package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// secretFormatCases: credentials in forms the scan once missed, or masked
// only in part.
func secretFormatCases() []badCase {
	const group = "credentials the scan once missed"
	const redis = "connect redis://:s3cretPassw0rd@redis-host:6379/0"
	plantRedis := sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (99999, '` + redis + `')`)
	keyLines := []string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK", "pRq2bwKf"}
	plantKey := sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (99990, '-----BEGIN RSA PRIVATE KEY-----'), (99991, '` + keyLines[0] + `'), (99992, '` + keyLines[1] + `'), (99993, '` + keyLines[2] + `'), (99994, '-----END RSA PRIVATE KEY-----')`)
	tokens := []string{"hvs.CAESI" + strings.Repeat("Vq3x", 8), "gsk_" + strings.Repeat("aB3d", 13), "0123456789abcdef0123456789abcdef", "Tr0ub4dor3xyz"}
	plantTokens := sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (99990, 'vault login ` + tokens[0] + `'), (99991, 'llm ` + tokens[1] + `'), (99992, 'export KAGGLE_KEY=` + tokens[2] + `'), (99993, '/usr/bin/curl -sS -u alice:` + tokens[3] + ` https://example.com/x')`)
	freeKey := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBYr8n2aTq5rE0uQ9Y3bdCq0aL2Wm1sVnXo7GkJfPzQxoAoGCCqGSM49\n-----END EC PRIVATE KEY-----"
	deleted := deletedStrings("a note of no interest", "db_password=LowerPassw0rd55", "loaded "+freeKey, "run --password FreePassw0rd77 now")
	intCol := []string{"ghp_" + strings.Repeat("i9Nt", 9), "IntColPassw0rd"}
	plantIntCol := sqliteEdit(`CREATE TABLE EXTRA (id INTEGER, n INTEGER); INSERT INTO EXTRA VALUES (1, '` + intCol[0] + `'), (2, 'db password: ` + intCol[1] + `')`)
	forms := []string{"AwsSecr3t" + strings.Repeat("Kq9", 10) + "x", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "MyDump-Pw-451", "Esc4ped-Url-Pw"}
	plantForms := sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (99990, 'aws configure set aws_secret_access_key ` + forms[0] + `'), (99991, 'wandb login ` + forms[1] + `'), (99992, '/usr/bin/mysqldump -u root -p` + forms[2] + ` app'), (99993, '{"db": "postgres:\/\/app:` + forms[3] + `@db.example.com\/x"}')`)
	notIn := func(name string, secrets ...string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			b := string(readFile(t, filepath.Join(dir, name)))
			for _, s := range secrets {
				if strings.Contains(b, s) {
					t.Errorf("%s holds %q", name, s)
				}
			}
		}
	}
	return []badCase{
		{group: group, name: "verify --fail-on-exposure: aws configure set aws_secret_access_key X, wandb login KEY, mysqldump -pPASSWORD and a JSON-escaped URL with a password in the strings (once none found: exit 0)",
			make: func(t *testing.T, dir string) []string { return append(plantForms(t, dir), "--fail-on-exposure") },
			exit: 3, want: []string{"secret aws_secret_access_key=…(40 chars) in table StringIds", "secret wandb_api_key=…(40 chars) in table StringIds", "secret password=…(13 chars) in table StringIds", "secret (url)="},
			never: forms},
		{group: group, name: "scrub: aws configure set aws_secret_access_key X, wandb login KEY, mysqldump -pPASSWORD and a JSON-escaped URL with a password in the strings (once kept in the copy)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{plantForms(t, dir)[0], "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 4 findings"},
			never: forms, check: notIn("shared.sqlite", forms...)},
		{group: group, name: "verify --fail-on-exposure: a GitHub token and \"password: X\" stored in a column declared INTEGER (once the token told only as raw bytes, the password not at all)",
			make: func(t *testing.T, dir string) []string { return append(plantIntCol(t, dir), "--fail-on-exposure") },
			exit: 3, want: []string{"secret (GitHub token)=ghp_…(40 chars) in table EXTRA column n", "secret password=…(14 chars) in table EXTRA column n"},
			never: intCol},
		{group: group, name: "scrub: a GitHub token and \"password: X\" stored in a column declared INTEGER (once nothing written, the token \"survived scrubbing\")", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{plantIntCol(t, dir)[0], "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 2 findings"},
			never: intCol, check: notIn("shared.sqlite", intCol...)},
		{group: group, name: "verify --fail-on-exposure: deleted strings \"--password X\", \"db_password=X\" and a private key, left in unused pages (once none found: exit 0)",
			make: func(t *testing.T, dir string) []string { return append(deleted(t, dir), "--fail-on-exposure") },
			exit: 3, want: []string{"found in unused pages of the file", "password=…(14 chars) at offset", "db_password=…(15 chars) at offset", "(private key)=…(124 chars) at offset"},
			never: []string{"FreePassw0rd77", "LowerPassw0rd55", "MHcCAQEEIBYr8n2aTq5"}},
		{group: group, name: "verify --fail-on-exposure: a HashiCorp Vault token, a Groq key, KAGGLE_KEY=... and curl -u USER:PASSWORD in the strings (once none found: exit 0)",
			make: func(t *testing.T, dir string) []string { return append(plantTokens(t, dir), "--fail-on-exposure") },
			exit: 3, want: []string{"secret (HashiCorp Vault token)=hvs.…(41 chars) in table StringIds", "secret (Groq key)=gsk_…(56 chars) in table StringIds", "secret KAGGLE_KEY=…(32 chars) in table StringIds", "secret password=…(13 chars) in table StringIds"},
			never: tokens},
		{group: group, name: "scrub: a HashiCorp Vault token, a Groq key, KAGGLE_KEY=... and curl -u USER:PASSWORD in the strings (once kept in the copy)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{plantTokens(t, dir)[0], "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 4 findings"},
			never: tokens, check: notIn("shared.sqlite", tokens...)},
		{group: group, name: "verify --fail-on-exposure: a private key a line a string of StringIds (once its BEGIN line alone told)",
			make: func(t *testing.T, dir string) []string { return append(plantKey(t, dir), "--fail-on-exposure") },
			exit: 3, want: []string{"secret (private key)=…(31 chars) in table StringIds column value and 3 strings after it (the key's lines) looks like a credential"},
			never: keyLines},
		{group: group, name: "scrub: a private key a line a string of StringIds (once its BEGIN line alone redacted, the key's lines kept in the copy)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{plantKey(t, dir)[0], "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 1 finding", "and 3 strings after it (the key's lines)"},
			never: keyLines, check: notIn("shared.sqlite", keyLines...)},
		{group: group, name: "verify --fail-on-exposure: a redis URL with a password and no user (redis://:PASSWORD@host) in the strings (once not found: exit 0)",
			make: func(t *testing.T, dir string) []string { return append(plantRedis(t, dir), "--fail-on-exposure") },
			exit: 3, want: []string{"secret (url)=…(39 chars) in table StringIds column value looks like a credential"},
			never: []string{"s3cretPassw0rd"}},
		{group: group, name: "scrub: a redis URL with a password and no user in the strings (once kept in the copy)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{plantRedis(t, dir)[0], "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 1 finding", "secret (url)=…(39 chars) in table StringIds"},
			never: []string{"s3cretPassw0rd"}, check: notIn("shared.sqlite", "s3cretPassw0rd")},
		{group: group, name: "a GPU name holding a URL whose password holds an unescaped @ (https://alice:p@ssw0rdXYZ@host; once printed as https://alice:…(1 char)@ssw0rdXYZ@host)",
			make: sqliteEdit(`UPDATE TARGET_INFO_GPU SET name = 'NVIDIA H200 https://alice:p@ssw0rdXYZ@host.example.com/x'`),
			exit: 0, want: []string{"NVIDIA H200 https://alice:…(11 chars)@host.example.com/x", "prediction 4 held"},
			never: []string{"ssw0rdXYZ"}},
	}
}

// deletedStrings copies the shipped export, adds the strings to StringIds
// and deletes them, their bytes left in the file's unused space.
func deletedStrings(strs ...string) func(t *testing.T, dir string) []string {
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
		mustExec(t, db, `DELETE FROM StringIds WHERE id >= 990100`)
		db.Close()
		return []string{p}
	}
}
