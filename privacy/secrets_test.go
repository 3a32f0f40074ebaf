package privacy

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

func TestFindSecrets(t *testing.T) {
	gh := "ghp_" + strings.Repeat("a1B2", 6)
	aws := "AKIA" + strings.Repeat("Q7", 8)
	cases := []struct {
		in   string
		want []string // the values found, in order
	}{
		{"backup.sh --password=Backup-Pass-771", []string{"Backup-Pass-771"}},
		{"./pinned --json out.json --password Run-Pass-552", []string{"Run-Pass-552"}},
		{"./pinned --json out.json --password=Run-Pass-552 --other x", []string{"Run-Pass-552"}},
		{"tool -token 'tok value'", []string{"tok value"}}, // the quoted words whole, not "'tok" with "value'" shown
		{`tool --api-key="k3y-v4lue"`, []string{"k3y-v4lue"}},
		{"env GITHUB_TOKEN=abc123 ./x", []string{"abc123"}},
		{"epoch 3 " + gh + " done", []string{gh}},
		{"worker " + aws, []string{aws}},
		{"NAME\x00SECRET_KEY=s3cr3t\x00PATH=/bin", []string{"s3cr3t"}},
		{"sync --db postgres://app:pw123@db/x", []string{"postgres://app:pw123@db"}},
		{"tool --password --verbose", nil},
		{"torch::jit::Token::text[abi:cxx11]() const", nil}, // a C++ symbol in a call stack
		{"token: Run-Pass-552", []string{"Run-Pass-552"}},
		{"tool --password=" + Redacted, nil},
		{"NSC_FAKE_TOKEN=nsc…(19 chars)", nil},
		{"./pinned --json out.json", nil},
		{"async-pinned", nil},
		{"TIKTOKEN_CACHE_DIR=/tmp/x", nil},
		// A control character before a token, escaped before the mask
		// sees it: Go's quoting (an error quoting a CSV cell), ctlchar's
		// and JSON's escapes. The escape's last byte is no part of a word.
		{`"\a` + aws + `" is not a time`, []string{aws}},
		{`H200\x1b` + aws, []string{aws}},
		{`H200\u001b` + gh, []string{gh}},
		{`note\n` + gh, []string{gh}},
		{`ax1b` + aws, nil},   // no backslash: a word going on
		{`\u00zz` + aws, nil}, // not an escape
		// A terminal's control sequence before a token (clear screen,
		// colours), raw or escaped: its final letter is no part of a word.
		{`rank0-\x1b[2J` + gh, []string{gh}},
		{"rank0-\x1b[2J" + gh, []string{gh}},
		{`H200\u001b[1;31m` + aws, []string{aws}},
		{"H200\u009b0K" + aws, []string{aws}},
		{`[2J` + aws, nil}, // no introducer: a word going on
	}
	for _, c := range cases {
		var want []secretWant
		for _, v := range c.want {
			want = append(want, secretWant{value: v})
		}
		checkSecrets(t, c.in, want)
	}
}

// secretWant is a secret FindSecrets must find: its value, and its format
// unless that is "".
type secretWant struct{ value, format string }

// checkSecrets checks what FindSecrets finds in s (the values in order,
// pointed at by their offsets, of the formats wanted) and that
// MaskSecrets masks them, changes a string with none, and changes nothing
// the second time.
func checkSecrets(t *testing.T, s string, want []secretWant) {
	t.Helper()
	var got, wanted, formats []string
	for _, sec := range FindSecrets(s) {
		if s[sec.Offset:sec.Offset+len(sec.Value)] != sec.Value {
			t.Errorf("FindSecrets(%q): offset %d does not point at %q", s, sec.Offset, sec.Value)
		}
		got = append(got, sec.Value+" "+sec.Format)
		formats = append(formats, sec.Format)
	}
	for i, w := range want {
		f := w.format
		if f == "" && i < len(got) {
			f = formats[i] // any format
		}
		wanted = append(wanted, w.value+" "+f)
	}
	if strings.Join(got, "|") != strings.Join(wanted, "|") {
		t.Errorf("FindSecrets(%q)\n got  %q\n want %q", s, got, wanted)
	}
	masked := MaskSecrets(s)
	for _, w := range want {
		if v := strings.Trim(w.value, "'"); len(v) > 4 && strings.Contains(masked, v) {
			t.Errorf("MaskSecrets(%q) = %q still holds %q", s, masked, v)
		}
	}
	if len(want) == 0 && masked != s {
		t.Errorf("MaskSecrets(%q) = %q changed a string with no secret", s, masked)
	}
	if MaskSecrets(masked) != masked {
		t.Errorf("MaskSecrets is not idempotent on %q", masked)
	}
}

// Fake credentials of each format, shaped as the real ones are (the AWS and
// JWT ones are the examples of AWS's and jwt.io's documentation).
var (
	fakeAWSID     = "AKIAIOSFODNN7EXAMPLE"
	fakeAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	fakeGoogle    = "AIzaSyB-" + strings.Repeat("x7Qk", 7) + "3e9"
	fakeStripe    = "sk_live_" + "51H8zq" + strings.Repeat("Tz4", 6)
	fakeStripeRK  = "rk_live_" + strings.Repeat("Ab9", 8)
	fakeJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakeNpm       = "npm_" + strings.Repeat("a1B2c3", 6)
	fakeGitHub    = "ghp_" + strings.Repeat("R4nd0m", 6)
	fakeGitHubPAT = "github_pat_11ABCDEFG0" + strings.Repeat("x_Y9", 10)
	fakeSlack     = "xoxb-2442093617-1234567890123-" + strings.Repeat("AbCd", 6)
	fakeBearer    = "9f8e7d6c5b4a3928170605f4"
	fakePyPI      = "pypi-AgEIcHlwaS5vcmcCJD" + strings.Repeat("k2Lm_9Qr", 8)
	fakeDocker    = "dckr_pat_" + "Xy7-" + strings.Repeat("p9Lq", 6)
	fakeSendGrid  = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
	fakeDO        = "dop_v1_" + strings.Repeat("3f7a9c1e", 8)
	fakeOAuth     = "ya29.a0AfH6SMB" + strings.Repeat("x-4Q_z", 8)
	fakeSlackApp  = "xapp-1-A0123BCDE-1234567890-" + strings.Repeat("ab12", 8)
	fakeSAS       = "sig=dD80ihBh5jfNpymO5Hg1IdiJIEvHcJpCMiCMnN%2FRnbI%3D"
	fakeKeyID     = "8f2b6c0d1e3a4f5b6c7d8e9f0a1b2c3d4e5f6a7b"
	fakeNVIDIA    = "nvapi-" + strings.Repeat("Qx7-kP2_", 8)
	fakeVault     = "hvs.CAESI" + strings.Repeat("Vq3x", 8)
	fakeWandb     = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	fakeGrafana   = "glc_eyJvIjoiMTIz" + strings.Repeat("Nk9x", 8)
	fakeSentry    = "sntrys_eyJpYXQiOjE2" + strings.Repeat("Mzk_", 8)
	fakeGroq      = "gsk_" + strings.Repeat("aB3d", 13)
	fakeReplicate = "r8_" + strings.Repeat("Zx9Q", 9) + "a"
	fakeShopify   = "shpat_" + strings.Repeat("0a1b2c3d", 4)
	fakeNewRelic  = "NRAK-" + strings.Repeat("A1B2C3D4E", 3)
	fakeAtlassian = "ATATT3xFfGF0" + strings.Repeat("Tq-8_w", 12)
	fakeAge       = "AGE-SECRET-KEY-1" + strings.Repeat("QRSTUVWXYZ", 6)
	fakeDiscord   = "discord.com/api/webhooks/123456789012345678/" + strings.Repeat("Ab-9_", 13)
	fakeDatabrick = "dapi" + strings.Repeat("0a9f", 8) + "-2"
	fakeSlackHook = "hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/" + strings.Repeat("aZ3k", 6)
	fakeAmzSig    = "X-Amz-Signature=" + strings.Repeat("3f7a9c1e", 8)
	fakeGoogSig   = "X-Goog-Signature=" + strings.Repeat("9c1e3f7a", 16)
	fakePEM       = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c8mUoFsH3xV\n9Zq0wK2bLm4Tn7Rp\n-----END RSA PRIVATE KEY-----"
)

// TestSecretFormats: one real-looking example of every format FindSecrets
// knows, found with its format and masked away; and near misses, which
// look alike but are no credential, left alone.
func TestSecretFormats(t *testing.T) {
	type want = secretWant
	cases := []struct {
		in   string
		want []secretWant
	}{
		{"aws configure " + fakeAWSID + " " + fakeAWSSecret, []want{{fakeAWSID, FormatAWSKeyID}, {fakeAWSSecret, FormatAWSSecret}}},
		{"keys " + fakeAWSID + ":" + fakeAWSSecret, []want{{fakeAWSID, FormatAWSKeyID}, {fakeAWSSecret, FormatAWSSecret}}},
		{"maps client " + fakeGoogle, []want{{fakeGoogle, FormatGoogle}}},
		{"charge with " + fakeStripe, []want{{fakeStripe, FormatStripe}}},
		{"restricted " + fakeStripeRK + " done", []want{{fakeStripeRK, FormatStripe}}},
		{"token " + fakeJWT + ".", []want{{fakeJWT, FormatJWT}}},
		{"curl -H 'X: Bearer " + fakeBearer + "'", []want{{fakeBearer, FormatBearer}}},
		{"registry " + fakeNpm, []want{{fakeNpm, FormatNpm}}},
		{"clone with " + fakeGitHub, []want{{fakeGitHub, FormatGitHub}}},
		{"notes_" + fakeGitHub, []want{{fakeGitHub, FormatGitHub}}},
		{"pat " + fakeGitHubPAT, []want{{fakeGitHubPAT, FormatGitHub}}},
		{"slack " + fakeSlack, []want{{fakeSlack, FormatSlack}}},
		{"key " + fakePEM + " trailing", []want{{fakePEM, FormatPrivateKey}}},
		{"key -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nBG5vbmU=\"\n}", []want{
			{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nBG5vbmU=", FormatPrivateKey}}},
		{"password: hunter2hunter2", []want{{"hunter2hunter2", FormatNamed}}},
		{"step 3 passwd=0000", []want{{"0000", FormatNamed}}},
		{`{"client_secret": "c-9a8b7c6d5e", "n": 1}`, []want{{"c-9a8b7c6d5e", FormatNamed}}},
		{"Server=db;Database=x;Password=Tr0ub4dor3;", []want{{"Tr0ub4dor3", FormatNamed}}},
		{"GET /v1?api_key=k9a8b7c6&x=1", []want{{"k9a8b7c6", FormatNamed}}},
		{"Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", []want{{"YWxhZGRpbjpvcGVuc2VzYW1l", FormatNamed}}},
		{"accessToken=abc-123-def", []want{{"abc-123-def", FormatNamed}}},
		{"sync --db postgres://app:pw123@db/x", []want{{"postgres://app:pw123@db", FormatURL}}},
		{"cache redis://:s3cretPassw0rd@redis-host:6379/0", []want{{"redis://:s3cretPassw0rd@redis-host:6379", FormatURL}}},
		{"mirror https://alice:p@ssw0rdXYZ@host.example.com/x", []want{{"https://alice:p@ssw0rdXYZ@host.example.com", FormatURL}}},
		{"upload " + fakePyPI, []want{{fakePyPI, FormatPyPI}}},
		{"login " + fakeDocker, []want{{fakeDocker, FormatDocker}}},
		{"mail " + fakeSendGrid + ".", []want{{fakeSendGrid, FormatSendGrid}}},
		{"droplet " + fakeDO, []want{{fakeDO, FormatDigitalOcean}}},
		{"gcs " + fakeOAuth, []want{{fakeOAuth, FormatGoogleOAuth}}},
		{"socket " + fakeSlackApp, []want{{fakeSlackApp, FormatSlack}}},
		{"https://acct.blob.core.windows.net/c/x?sv=2021-08-06&se=2026-01-01&sp=r&" + fakeSAS + "&x=1", []want{{fakeSAS, FormatAzureSAS}}},
		{`{"type": "service_account", "private_key_id": "` + fakeKeyID + `"}`, []want{{fakeKeyID, FormatNamed}}},
		{"env MYSQL_PWD=Tr0ub4dor3 mysql -u app", []want{{"Tr0ub4dor3", FormatNamed}}},
		{"NIM model pull " + fakeNVIDIA + " done", []want{{fakeNVIDIA, FormatNVIDIA}}},
		{"databricks " + fakeDatabrick, []want{{fakeDatabrick, FormatDatabricks}}},
		{"notify https://" + fakeSlackHook + " ok", []want{{fakeSlackHook, FormatSlackHook}}},
		{"https://b.s3.amazonaws.com/k?X-Amz-Date=20261201T000000Z&" + fakeAmzSig + "&x=1", []want{{fakeAmzSig, FormatSignedURL}}},
		{"https://storage.googleapis.com/b/o?" + fakeGoogSig, []want{{fakeGoogSig, FormatSignedURL}}},

		{"vault " + fakeVault + " ok", []want{{fakeVault, FormatVault}}},
		{"grafana " + fakeGrafana, []want{{fakeGrafana, FormatGrafana}}},
		{"SENTRY_DSN_NOTE " + fakeSentry, []want{{fakeSentry, FormatSentry}}},
		{"llm " + fakeGroq + " done", []want{{fakeGroq, FormatGroq}}},
		{"predict " + fakeReplicate, []want{{fakeReplicate, FormatReplicate}}},
		{"shop " + fakeShopify, []want{{fakeShopify, FormatShopify}}},
		{"apm " + fakeNewRelic, []want{{fakeNewRelic, FormatNewRelic}}},
		{"jira " + fakeAtlassian, []want{{fakeAtlassian, FormatAtlassian}}},
		{"age " + fakeAge, []want{{fakeAge, FormatAge}}},
		{"notify https://" + fakeDiscord + " ok", []want{{fakeDiscord, FormatDiscordHook}}},
		{"KAGGLE_KEY=0123456789abcdef0123456789abcdef", []want{{"0123456789abcdef0123456789abcdef", FormatNamed}}},
		{"OPENAI_KEY=k9a8b7c6d5e4 AZURE_STORAGE_KEY=c3RvcmFnZWtleQ==", []want{{"k9a8b7c6d5e4", FormatNamed}, {"c3RvcmFnZWtleQ==", FormatNamed}}},

		{"/usr/bin/curl -sS -u alice:Tr0ub4dor3 https://x/y", []want{{"Tr0ub4dor3", FormatNamed}}},
		{"curl --user=bob:hunter2hunter2 --proxy-user carol:S3cr3tPr0xy https://x", []want{{"hunter2hunter2", FormatNamed}, {"S3cr3tPr0xy", FormatNamed}}},
		{"aws configure set aws_secret_access_key " + fakeAWSSecret + " --profile ci", []want{{fakeAWSSecret, FormatNamed}}},
		{"aws configure set default.aws_access_key_id " + fakeAWSID, []want{{fakeAWSID, FormatNamed}}},
		{"aws configure set profile.ci.aws_session_token FwoGZXIvYXdzEJr//////////wEaDOnq", []want{{"FwoGZXIvYXdzEJr//////////wEaDOnq", FormatNamed}}},
		{"wandb login " + fakeWandb, []want{{fakeWandb, FormatNamed}}},
		{"/opt/venv/bin/wandb login --relogin --host https://wandb.example.com " + fakeWandb, []want{{fakeWandb, FormatNamed}}},
		{"export WANDB_API_KEY=" + fakeWandb, []want{{fakeWandb, FormatNamed}}},
		{"mysql -u root -pTr0ub4dor3 -h db app", []want{{"Tr0ub4dor3", FormatNamed}}},
		{"sh -c cd /srv && sudo MYSQL_HOST=db mysql -pK1ng-of-db", []want{{"K1ng-of-db", FormatNamed}}},
		{"/usr/bin/mysqldump -uroot -p'S3cr3t-dump' app > app.sql", []want{{"S3cr3t-dump", FormatNamed}}},
		{"mysqladmin -pAdm1nPw status; mariadb -p0451 -e 'select 1'", []want{{"Adm1nPw", FormatNamed}, {"0451", FormatNamed}}},
		{`{"url": "https:\/\/alice:Tr0ub4dor3@db.example.com\/x"}`, []want{{`https:\/\/alice:Tr0ub4dor3@db.example.com`, FormatURL}}},
		{`{"url": "postgres:\u002F\u002Fapp:pw123@db\u002Fx"}`, []want{{`postgres:\u002F\u002Fapp:pw123@db`, FormatURL}}},
		{`"mirror":"https:\u002f\u002fbob:hunter2hunter2@h"`, []want{{`https:\u002f\u002fbob:hunter2hunter2@h`, FormatURL}}},

		// Near misses.
		{"mkdir -p /tmp/x && cp -p a b; gcc -pthread -pipe x.c; mysql -p; mysql -P 3306 -p", nil},
		{"gcc -o mysql mysql.c -pthread; ls mysql -pv; echo mysqldump -ptoo", nil},
		{"ssh -p 2222 host; nc -p 8080; pg_dump -p 5432 -pfoo app; docker run -p8080:80 img", nil},
		{"wandb login; wandb login --relogin; wandb sync 3f786850e387550fdab836ed7e6dc881de23001b", nil},
		{"git checkout 3f786850e387550fdab836ed7e6dc881de23001b; wandb login --host https://x", nil},
		{"aws configure set region us-east-1; aws configure set default.output json; aws configure list", nil},
		{`{"url": "https:\/\/example.com\/a:b@c", "p": "http:\u002F\u002Fhost\u002Fx"}`, nil},
		{"ncclKernel_AllReduce_RING_LL_Sum_float volta_sgemm_128x64_nn /home/user/.cache/torch/kernels:1", nil},
		{"docker run -u 1000:1000 img; python -u train.py; curl -u alice: https://x; sort -u a:b", nil},
		{"hvs.short glc_x gsk_small r8_x shpat_ NRAK-1 ATATT3 AGE-SECRET-KEY-1 discord.com/api/webhooks/1", nil},
		{"CACHE_KEY=abc PRIMARY_KEY=id kaggle_key_file=/k.json OPENAI_KEY_NAME=default", nil},
		{"max_tokens=512 tokens: 2048 token_count: 5", nil},
		{"secretly-synchronous: 67 copies", nil},
		{`"secretlySync": 12`, nil},
		{"TIKTOKEN_CACHE_DIR=/tmp/x TOKENIZERS_PARALLELISM=false", nil},
		{"DB_PASSWORD_FILE=/run/secrets/db password=$DB_PASSWORD auth=true", nil},
		// A file's name before ": " (report's line of what it wrote) names
		// no secret.
		{"runs/my-secret.json: out/audit.html (4 files) token.sqlite: x/report.md api-key.nsys-rep: y.txt", nil},
		{"key: value sort_key=name", nil},
		{"AKIA123 task-" + strings.Repeat("q", 40) + " sk-learn ghp_short", nil},
		{"model_hf_transformers_loading_stage npm_install_dependencies_now", nil},
		{"eyJhbGciOiJIUzI1NiJ9 and eyJhbGciOiJIUzI1NiJ9.notapayload.sig", nil},
		{"-----BEGIN CERTIFICATE-----\nMIIB", nil},
		{"the bearer of bad news; xoxo-hugs", nil},
		{"https://example.com/a:b time 12:30 a == b", nil},
		{"ssh://git@host:22/x http://[::1]:8080/a@b mailto:bob@example.com", nil},
		{"sha 3f786850e387550fdab836ed7e6dc881de23001b", nil},
		{"PWD=/tmp/x SG.short.name pypi-AgEI dckr_pat_x ya29.short xapp-short sig=abc design=" + strings.Repeat("x", 40), nil},
		{"SG.layer1.conv2.weight_gradient_accumulation_buffer", nil}, // a dotted name, not id.secret
		{"key_id=7 private_key_id_file=/k.json", nil},
		{"nvapi-short dapi_call dapiLoaderForTheWholeModelsTrainingSet hooks.slack.com/services/ X-Amz-Signature=abc", nil},
	}
	for _, c := range cases {
		checkSecrets(t, c.in, c.want)
	}
	// A hash beside an access key id is not its secret key.
	got := FindSecrets("AKIAIOSFODNN7EXAMPLE 3f786850e387550fdab836ed7e6dc881de23001b")
	if len(got) != 1 || got[0].Format != FormatAWSKeyID {
		t.Errorf("a hex hash beside a key id: %+v", got)
	}
}

// The secrets planted in names by namesFixture.
var nameSecrets = []string{"Backup-Pass-771", "Run-Pass-552", "ghp_" + strings.Repeat("n4M3", 6), "AKIA" + strings.Repeat("T8", 8), "xoxb-" + strings.Repeat("s1", 10)}

// namesFixture copies a clean capture and plants credentials where names
// live: another process's command line, the profiled program's own command
// line (PROCESSES and META_DATA_CAPTURE, with the password after other
// arguments), an NVTX range's text, a thread name and a bare StringIds value.
func namesFixture(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, "names.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, dst); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(dst, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO PROCESSES (globalPid, pid, name) VALUES (4343 << 24, 4343, 'backup.sh --user bob --password=` + nameSecrets[0] + `')`,
		`UPDATE PROCESSES SET name = './pinned --json out.json --password ` + nameSecrets[1] + `' WHERE pid = 22`,
		`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:COMMAND', './pinned --json out.json --password ` + nameSecrets[1] + `')`,
		`UPDATE NVTX_EVENTS SET text = 'epoch ` + nameSecrets[2] + `' WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS)`,
		`UPDATE StringIds SET value = value || ' ` + nameSecrets[3] + `' WHERE id = (SELECT nameId FROM ThreadNames WHERE (globalTid >> 24) & 16777215 = 22 LIMIT 1)`,
		`INSERT INTO StringIds (id, value) VALUES (900100, 'note ` + nameSecrets[4] + `')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return dst
}

// scanWhere scans path and returns the report and where each value found
// was found.
func scanWhere(t *testing.T, path string) (*Report, map[string]string) {
	t.Helper()
	rep, err := ScanPath(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	where := map[string]string{}
	for _, f := range rep.Findings {
		where[f.value] = f.Where
	}
	return rep, where
}

// scrubHoldsNone scrubs in to out and checks that no byte of the copy
// holds one of secrets; it returns out.
func scrubHoldsNone(t *testing.T, in, out string, secrets []string) string {
	t.Helper()
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the scrubbed copy holds %q", s)
		}
	}
	return out
}

// TestSecretsInNames: Scan finds every planted credential, its messages
// show none of them, and Scrub's copy holds none (its own final check
// runs the same detector).
func TestSecretsInNames(t *testing.T) {
	dir := t.TempDir()
	in := namesFixture(t, dir)
	rep, found := scanWhere(t, in)
	for _, s := range nameSecrets {
		if _, ok := found[s]; !ok {
			t.Errorf("Scan missed %q; found %v", s, found)
		}
	}
	var msgs strings.Builder
	for _, d := range rep.Diagnostics() {
		msgs.WriteString(detailText(d) + "\n")
	}
	for _, f := range rep.Findings {
		msgs.WriteString(f.Name + " " + f.Where + " " + f.Masked + "\n")
	}
	for _, s := range nameSecrets {
		if strings.Contains(msgs.String(), s) {
			t.Errorf("a message shows %q:\n%s", s, msgs.String())
		}
	}
	if !strings.Contains(msgs.String(), "backup.sh --user bob --password=") {
		t.Errorf("the other process is not named (masked):\n%s", msgs.String())
	}

	out := scrubHoldsNone(t, in, filepath.Join(dir, "shared.sqlite"), nameSecrets)
	// The check Scrub ends with would have refused a copy that kept one.
	after, err := ScanPath(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Clean() {
		t.Errorf("scrubbed copy has findings: %+v", after.Findings)
	}
}

// TestSecretInWAL: a credential committed to a WAL-mode export but still in
// its -wal is found by Scan and absent from Scrub's copy, which is made from
// the committed state; the input and its -wal are left as they were.
func TestSecretInWAL(t *testing.T) {
	scratch, dir := t.TempDir(), t.TempDir()
	src := filepath.Join(scratch, "wal.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, src); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(src, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`,
		`INSERT INTO PROCESSES (globalPid, pid, name) VALUES (4343 << 24, 4343, 'backup.sh --password=` + nameSecrets[0] + `')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	// Copy the file and its log while the writer is open (as after a crash).
	in := filepath.Join(dir, "wal.sqlite")
	for _, s := range []string{"", "-wal"} {
		if err := copyFile(src+s, nil, in+s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if raw, _ := os.ReadFile(in); bytes.Contains(raw, []byte(nameSecrets[0])) {
		t.Fatal("the secret reached the main file; the case needs it in the -wal only")
	}
	before := hashFile(t, in+"-wal")
	rep, err := ScanPath(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, " "), "wal.sqlite-wal") {
		t.Errorf("no note about the -wal: %q", rep.Notes)
	}
	hit := false
	for _, f := range rep.Findings {
		hit = hit || f.value == nameSecrets[0]
	}
	if !hit {
		t.Errorf("Scan missed the secret committed to the -wal")
	}
	out := filepath.Join(t.TempDir(), "shared.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(out); bytes.Contains(raw, []byte(nameSecrets[0])) {
		t.Error("the scrubbed copy holds the secret")
	}
	if hashFile(t, in+"-wal") != before {
		t.Error("the input's -wal changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the input's folder holds %v, want the file and its -wal", names)
	}
}

// TestRawTokens: a bare token of a well-known format is found in the raw
// bytes too: in a .nsys-rep (searched as raw bytes only) and in the unused
// pages of an export, where a deleted row left it.
func TestRawTokens(t *testing.T) {
	dir := t.TempDir()
	tok := "ghp_" + strings.Repeat("R4w", 8)
	rep := filepath.Join(dir, "x.nsys-rep")
	data := append([]byte("NVIDIA Tegra Profiler Report\x00\x01"), bytes.Repeat([]byte{0x9c, 0x00}, 5000)...)
	data = append(data, []byte("\x00nvtx epoch "+tok+"\x00")...)
	data = append(data, bytes.Repeat([]byte{0x7f}, 3000)...)
	if err := os.WriteFile(rep, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ScanPath(context.Background(), rep)
	if err != nil {
		t.Fatal(err)
	}
	if !hasValue(r, tok, false) {
		t.Errorf("the token in the .nsys-rep was missed: %+v", r.Findings)
	}

	p := filepath.Join(dir, "x.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, p); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA secure_delete = OFF`,
		`INSERT INTO StringIds (id, value) VALUES (900200, 'note ` + tok + ` ` + strings.Repeat("pad ", 1500) + `')`,
		`DELETE FROM StringIds WHERE id = 900200`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	if r, err = ScanPath(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if !hasValue(r, tok, true) {
		t.Errorf("the token in unused pages was missed: %+v", r.Findings)
	}
}

// hasValue reports whether r holds a secret finding of value, in unused
// space or not as unused says.
func hasValue(r *Report, value string, unused bool) bool {
	for _, f := range r.Findings {
		if f.value == value && f.Kind == KindSecret && f.Unused == unused {
			return true
		}
	}
	return false
}

// TestSecretsInSchemaNames: credentials in the schema's own names — a
// table's, a column's, an index's, and a view's SQL — are found by Scan
// (the places named with the names masked), and Scrub's copy drops the
// table, index and view named with one and renames the column, keeping
// its table and rows.
func TestSecretsInSchemaNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "names.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	table, column, index, view := "notes_"+fakeGitHub, "col_"+fakeAWSID, "idx_password=Tr0ub4dor3", "recent"
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE "` + table + `" (x INTEGER)`,
		`CREATE TABLE kept (id INTEGER, "` + column + `" TEXT)`,
		`INSERT INTO kept VALUES (1, 'row')`,
		`CREATE INDEX "` + index + `" ON kept (id)`,
		`CREATE VIEW "` + view + `" AS SELECT id FROM kept WHERE 'token=` + fakeNpm + `' <> ''`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	_, where := scanWhere(t, in)
	for _, s := range []string{fakeGitHub, fakeAWSID, "Tr0ub4dor3", fakeNpm} {
		w, ok := where[s]
		if !ok {
			t.Errorf("Scan missed %q in the schema; found %v", s, where)
			continue
		}
		if !strings.HasPrefix(w, "the schema: ") || strings.Contains(w, s) {
			t.Errorf("%q found in %q, want a place in the schema that does not show it", s, w)
		}
	}
	out := scrubHoldsNone(t, in, filepath.Join(dir, "shared.sqlite"), []string{fakeGitHub, fakeAWSID, "Tr0ub4dor3", fakeNpm})
	sdb, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(out))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var n int
	if err := sdb.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN (?, ?, ?)`, table, index, view).Scan(&n); err != nil || n != 0 {
		t.Errorf("the table, index and view named with a credential: %d left (%v)", n, err)
	}
	var id int
	var v string
	if err := sdb.QueryRow(`SELECT id, "`+Redacted+`_1" FROM kept`).Scan(&id, &v); err != nil || id != 1 || v != "row" {
		t.Errorf("the table whose column was renamed: %d %q %v", id, v, err)
	}
}

// TestCommandFormsScrubbed: the passwords of aws configure set, wandb
// login, mysql -pPASSWORD and a URL whose slashes JSON escaped are found in
// a live string and in a deleted row's bytes, and Scrub's copy holds none.
func TestCommandFormsScrubbed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "forms.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	live := []string{"Tr0ub4dor3-aws-" + strings.Repeat("k", 25), fakeWandb, "Live-my-Pw-91", "Esc4ped-Live-Pw"}
	gone := []string{"Gone-aws-" + strings.Repeat("q", 31), "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", "Gone-my-Pw-17", "Esc4ped-Gone-Pw"}
	text := func(v []string) []string {
		return []string{
			"aws configure set aws_secret_access_key " + v[0],
			"wandb login --relogin " + v[1],
			"/usr/bin/mysqldump -u root -p" + v[2] + " app",
			`{"db": "postgres:\/\/app:` + v[3] + `@db.example.com\/x"}`,
		}
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, v TEXT)`)
	for i, s := range text(live) {
		exec(`INSERT INTO StringIds (id, value) VALUES (?, ?)`, 99980+i, s)
	}
	for i, s := range text(gone) {
		exec(`INSERT INTO notes (id, v) VALUES (?, ?)`, i, s+" "+strings.Repeat("pad ", 40))
	}
	exec(`DELETE FROM notes`)
	db.Close()
	rep, err := ScanPath(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]Finding{}
	for _, f := range rep.Findings {
		found[f.value] = f
	}
	for _, v := range live {
		if _, ok := found[v]; !ok && !foundInURL(found, v) {
			t.Errorf("Scan missed %q in a live string; found %v", v, found)
		}
	}
	for _, v := range gone {
		f, ok := found[v]
		if !ok {
			for k, g := range found {
				if strings.Contains(k, v) {
					f, ok = g, true
				}
			}
		}
		if !ok || !f.Unused {
			t.Errorf("Scan missed %q in a deleted row (found: %v, unused: %v)", v, ok, f.Unused)
		}
	}
	scrubHoldsNone(t, in, filepath.Join(dir, "shared.sqlite"), append(append([]string{}, live...), gone...))
}

// foundInURL reports whether a URL found holds the password v.
func foundInURL(found map[string]Finding, v string) bool {
	for k := range found {
		if strings.Contains(k, ":"+v+"@") {
			return true
		}
	}
	return false
}
