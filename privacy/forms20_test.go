package privacy

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// TestQuotedAndNetrcValues: a passphrase of several words in quotes is
// the secret whole, where the words after its first were shown; a value
// that a JSON string's closing quote ends is the value alone, not its
// quote and comma; a .netrc entry's password is one, and so are the
// passwords of sshpass -p, redis-cli -a and docker login -p, not the ports
// of ssh -p, redis-cli -p or docker run -p.
func TestQuotedAndNetrcValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`password='my secret phrase'`, []string{"my secret phrase"}},
		{`--password "my secret phrase" --x`, []string{"my secret phrase"}},
		{`PGPASSWORD="my secret" psql`, []string{"my secret"}},
		{`--token "never closed`, []string{`"never`}},
		{`{"source": "pinned.cu results --password JsonSrcPw123", "x": 1}`, []string{"JsonSrcPw123"}},
		{`{"cmd": "mysql -pS3cret99"}`, []string{"S3cret99"}},
		{`{"u": "curl -u bob:S3cretPw99"}`, []string{"S3cretPw99"}},
		{`password="abc12345",`, []string{"abc12345"}},
		{`--password it's"own`, []string{`it's"own`}}, // a quote inside the value is its own
		{"machine api.example.com login bob password s3cr3tPW", []string{"s3cr3tPW"}},
		{"machine api.example.com\n  login bob\n  password s3cr3tPW\n", []string{"s3cr3tPW"}},
		{"default login bob password 'two words'", []string{"two words"}},
		{"sshpass -p 'Ssh Pw 1' ssh -p 22 host", []string{"Ssh Pw 1"}}, // ssh's -p is its port
		{"/usr/bin/sshpass -pSshPw22 scp a b", []string{"SshPw22"}},
		{"redis-cli -h cache -p 6379 -a R3disPw99 ping", []string{"R3disPw99"}}, // redis-cli's -p is its port
		{"redis-cli --user app --pass R3disPw98", []string{"R3disPw98"}},
		{"docker login -u bob -p D0ckerPw77 registry.example.com", []string{"D0ckerPw77"}},
		{"podman login -p P0dmanPw66 quay.io", []string{"P0dmanPw66"}},
		{"docker run -p 8080:80 nginx", nil},
		{"redis-cli -a", nil},
		{"sshpass -p", nil},
		{"login reset password", nil},
		{"user password reset page", nil},
		{"the password was rotated", nil},
	} {
		var want []secretWant
		for _, v := range c.want {
			want = append(want, secretWant{value: v})
		}
		checkSecrets(t, c.in, want)
	}
}

// TestCredentialForms: the forms of the list are credentials in
// live strings (GitLab, an Azure connection string's AccountKey, an OpenAI
// project key, URL query tokens, HF_TOKEN=), masked whole; words and paths
// that look like them are not.
func TestCredentialForms(t *testing.T) {
	azureKey := "abc123DEF456ghi789JKL012mno345PQR678stu901VWX234yz+/ab=="
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"git clone https://oauth2:glpat-abcdefghij0123456789@gitlab.com/x.git", []string{"https://oauth2:glpat-abcdefghij0123456789@gitlab.com"}},
		{"token glpat-abcdefghij0123456789 set", []string{"glpat-abcdefghij0123456789"}},
		{"DefaultEndpointsProtocol=https;AccountName=foo;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", []string{azureKey}},
		{"OPENAI_API_KEY sk-proj-abcDEF123_-ghiJKL456mnoPQR789stuVWX012yzABC345", []string{"sk-proj-abcDEF123_-ghiJKL456mnoPQR789stuVWX012yzABC345"}},
		{"GET https://example.com/api?token=abc123def456ghi HTTP/1.1", []string{"abc123def456ghi"}},
		{"https://example.com/api?a=1&access_token=abc123def456ghi&b=2", []string{"abc123def456ghi"}},
		{"HF_TOKEN=abcdef123456789xyz python train.py", []string{"abcdef123456789xyz"}},
		{"xoxb-123456789012-123456789012-abcdefABCDEFabcdef", []string{"xoxb-123456789012-123456789012-abcdefABCDEFabcdef"}},
		{"void gemm_kernel_sk_proj<float>(float*, int)", nil},
		{"/home/user/hf_cache/models/glpat_notes.txt", nil},
		{"task-proj-manager step", nil},
		{"AccountKeyRotation", nil},
	} {
		var want []secretWant
		for _, v := range c.want {
			want = append(want, secretWant{value: v})
		}
		checkSecrets(t, c.in, want)
	}
}

// TestShippedStringsHoldNoSecret: the strings of every shipped capture
// (kernel, API and thread names, NVTX ranges, paths, metadata) hold
// nothing the detector takes for a credential.
func TestShippedStringsHoldNoSecret(t *testing.T) {
	paths, err := filepath.Glob("../testdata/captures/*/*.sqlite")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no shipped capture found: %v", err)
	}
	n := 0
	for _, p := range paths {
		db, err := sql.Open("sqlite3", nsysdb.URI(p, "mode=ro"))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`SELECT value FROM StringIds`, `SELECT coalesce(text, '') FROM NVTX_EVENTS`,
			`SELECT coalesce(value, '') FROM META_DATA_CAPTURE`, `SELECT coalesce(value, '') FROM META_DATA_EXPORT`} {
			rows, err := db.Query(q)
			if err != nil {
				continue // a capture without the table
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				n++
				if secs := FindSecrets(s); len(secs) > 0 {
					t.Errorf("%s: %q taken for a credential: %+v", filepath.Base(p), s, secs)
				}
			}
			rows.Close()
		}
		db.Close()
	}
	if n < 1000 {
		t.Errorf("%d strings read from %d captures, want thousands", n, len(paths))
	}
}
