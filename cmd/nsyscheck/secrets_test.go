package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedSecrets are credentials planted in the names a capture carries.
var plantedSecrets = []string{"Backup-Pass-771", "Run-Pass-552", "ghp_" + strings.Repeat("n4M3", 6), "AKIA" + strings.Repeat("T8", 8)}

// TestSecretsNeverPrinted plants credentials in a process's command line,
// the profiled program's command line, an NVTX range's text and the
// program's thread name, and checks that verify (every format), report
// (every file) and scrub (messages and the copy) show none of them.
func TestSecretsNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	in := sqliteEdit(plantSecretsSQL)(t, dir)[0]
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	var all strings.Builder
	for _, format := range []string{"text", "json", "markdown"} {
		_, out, errOut := runMain(t, []string{"verify", "--format", format, in})
		all.WriteString(out + errOut)
	}
	if !strings.Contains(all.String(), "--password=") {
		t.Fatalf("verify does not warn about the planted command line:\n%s", all.String())
	}
	rdir := filepath.Join(t.TempDir(), "report")
	code, out, errOut := runMain(t, []string{"report", in, "-o", rdir})
	if code == exitError {
		t.Fatalf("report: %s", errOut)
	}
	all.WriteString(out + errOut)
	entries, err := os.ReadDir(rdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b := readFile(t, filepath.Join(rdir, e.Name()))
		all.WriteString(string(b))
	}
	shared := filepath.Join(t.TempDir(), "shared.sqlite")
	code, out, errOut = runMain(t, []string{"scrub", in, "-o", shared})
	if code == exitError {
		t.Fatalf("scrub: %s", errOut)
	}
	all.WriteString(out + errOut)
	all.Write(readFile(t, shared))
	for _, s := range plantedSecrets {
		if strings.Contains(all.String(), s) {
			t.Errorf("%q appears in an output or the scrubbed copy", s)
		}
	}
}

// Credentials of the formats the detector knows, shaped like real ones
// (the AWS and JWT ones are the examples of AWS's and jwt.io's
// documentation), each planted where a capture keeps names.
var formatSecrets = map[string]string{
	"AWS access key id":     "AKIAIOSFODNN7EXAMPLE",
	"AWS secret access key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"Google API key":        "AIzaSyB-" + strings.Repeat("x7Qk", 7) + "3e9",
	"Stripe key":            "sk_live_51H8zq" + strings.Repeat("Tz4", 6),
	"JWT":                   "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	"bearer token":          "9f8e7d6c5b4a3928170605f4",
	"npm token":             "npm_" + strings.Repeat("a1B2c3", 6),
	"GitHub token":          "github_pat_11ABCDEFG0" + strings.Repeat("x_Y9", 10),
	"Slack token":           "xoxp-2442093617-" + strings.Repeat("AbCd", 6),
	"private key":           "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB",
	"password":              "Tr0ub4dor-and-3",
	"table name token":      "ghp_" + strings.Repeat("T4bL", 9),
	"column name token":     "AKIAQ7Q7Q7Q7Q7Q7Q7Q7",
	"PyPI token":            "pypi-AgEIcHlwaS5vcmcCJD" + strings.Repeat("k2Lm_9Qr", 8),
	"Docker token":          "dckr_pat_Xy7-" + strings.Repeat("p9Lq", 6),
	"SendGrid key":          "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",
	"DigitalOcean token":    "dop_v1_" + strings.Repeat("3f7a9c1e", 8),
	"Google OAuth token":    "ya29.a0AfH6SMB" + strings.Repeat("x-4Q_z", 8),
	"Slack app token":       "xapp-1-A0123BCDE-1234567890-" + strings.Repeat("ab12", 8),
	"Azure SAS signature":   "dD80ihBh5jfNpymO5Hg1IdiJIEvHcJpCMiCMnN%2FRnbI%3D",
	"GCP private key id":    "8f2b6c0d1e3a4f5b6c7d8e9f0a1b2c3d4e5f6a7b",
	"MySQL password":        "Tr0ub4dor-mysql-3",
	"NVIDIA API key":        "nvapi-" + strings.Repeat("Qx7-kP2_", 8),
	"Databricks token":      "dapi" + strings.Repeat("0a9f", 8),
	"Slack webhook":         "T0A1B2C3D/B4E5F6G7H/" + strings.Repeat("aZ3k", 6),
	"signed URL signature":  strings.Repeat("3f7a9c1e", 8),
}

// plantFormatsSQL plants formatSecrets in NVTX range names (one range per
// format: renaming ranges named rangeText, or, when rangeText is "", new
// ranges as long as the capture's first), a thread name, and a table and a
// column of the export's own schema.
func plantFormatsSQL(rangeText string) string {
	s := formatSecrets
	names := []string{
		"aws " + s["AWS access key id"] + " " + s["AWS secret access key"],
		"maps " + s["Google API key"] + " / " + s["Stripe key"],
		"auth " + s["JWT"] + " / Authorization: Bearer " + s["bearer token"],
		"publish " + s["npm token"] + " " + s["GitHub token"] + " " + s["Slack token"],
		"key -----BEGIN OPENSSH PRIVATE KEY-----\n" + s["private key"] + "\n-----END OPENSSH PRIVATE KEY-----",
		"upload " + s["PyPI token"] + " " + s["Docker token"] + " " + s["SendGrid key"],
		"cloud " + s["DigitalOcean token"] + " " + s["Google OAuth token"] + " " + s["Slack app token"],
		"blob ?sv=2021-08-06&sp=r&sig=" + s["Azure SAS signature"] + " MYSQL_PWD=" + s["MySQL password"],
		`sa {"private_key_id": "` + s["GCP private key id"] + `"}`,
		"nim " + s["NVIDIA API key"] + " " + s["Databricks token"] + " https://hooks.slack.com/services/" + s["Slack webhook"],
		"https://b.s3.amazonaws.com/k?X-Amz-Signature=" + s["signed URL signature"],
	}
	var q strings.Builder
	for i, n := range names {
		if rangeText == "" {
			fmt.Fprintf(&q, `INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) SELECT start, end, eventType, '%s', globalTid FROM NVTX_EVENTS LIMIT 1;`+"\n", n)
			continue
		}
		fmt.Fprintf(&q, `UPDATE NVTX_EVENTS SET text = '%s' WHERE rowid = (SELECT rowid FROM NVTX_EVENTS WHERE text = '%s' LIMIT 1 OFFSET %d);`+"\n",
			n, rangeText, i)
	}
	fmt.Fprintf(&q, `UPDATE StringIds SET value = 'worker password: %s' WHERE id = (SELECT nameId FROM ThreadNames LIMIT 1);`+"\n", s["password"])
	fmt.Fprintf(&q, `CREATE TABLE "notes_%s" ("col_%s" TEXT);`, s["table name token"], s["column name token"])
	return q.String()
}

// TestSecretFormatsNeverPrinted: credentials of every format the detector
// knows, in NVTX range names, a thread name, a table's and a column's
// name, are flagged (verify --fail-on-exposure exits 3) and never printed
// by verify or audit (the audit's class keys name the ranges) in any
// format, nor kept by scrub, whose copy verifies clean.
func TestSecretFormatsNeverPrinted(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	verifyIn := sqliteEdit(plantFormatsSQL(""))(t, t.TempDir())[0]

	auditIn := filepath.Join(t.TempDir(), "train.sqlite")
	writeFile(t, auditIn, readFile(t, "../../testdata/captures/train-pageable/train-pageable.sqlite"))
	db, err := sql.Open("sqlite3", auditIn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(plantFormatsSQL("step")); err != nil {
		t.Fatal(err)
	}
	db.Close()

	var all strings.Builder
	code, out, errOut := runMain(t, []string{"verify", "--fail-on-exposure", verifyIn})
	if code != exitExposed {
		t.Errorf("verify --fail-on-exposure: exit %d, want %d\n%s", code, exitExposed, errOut)
	}
	all.WriteString(out + errOut)
	for _, s := range []string{"(GitHub token)", "(AWS access key id)", "the schema: table"} {
		// The report wraps at 80 columns and the temporary path's length
		// moves the breaks, so the words are compared with the breaks undone.
		if !strings.Contains(strings.Join(strings.Fields(out), " "), s) {
			t.Errorf("verify does not report %q:\n%s", s, out)
		}
	}
	for _, format := range []string{"text", "json", "markdown"} {
		_, out, errOut := runMain(t, []string{"verify", "--format", format, verifyIn})
		all.WriteString(out + errOut)
		_, out, errOut = runMain(t, []string{"audit", "--nvidia-rule", "off", "--format", format, auditIn})
		all.WriteString(out + errOut)
		if format == "text" && !strings.Contains(strings.Join(strings.Fields(out), " "), "[key …(") {
			t.Errorf("the audit's class key does not show the masked range name:\n%s", out)
		}
	}
	shared := filepath.Join(t.TempDir(), "shared.sqlite")
	if code, out, errOut := runMain(t, []string{"scrub", verifyIn, "-o", shared}); code != 0 {
		t.Fatalf("scrub: exit %d\n%s%s", code, out, errOut)
	}
	all.Write(readFile(t, shared))
	for what, s := range formatSecrets {
		if strings.Contains(all.String(), s) {
			t.Errorf("the %s %q appears in an output or the scrubbed copy", what, s)
		}
	}
	if code, out, _ := runMain(t, []string{"verify", "--fail-on-exposure", shared}); code != exitHeld || strings.Contains(out, "capture-exposes") {
		t.Errorf("the scrubbed copy: exit %d\n%s", code, out)
	}
}

// TestCSVSecretsFailExposure: a folder of CSV reports is scanned as an
// export is: a GitHub token in the API trace's thread names and an AWS key
// in NVTX range names make verify --fail-on-exposure exit 3, and neither
// verify nor audit prints them.
func TestCSVSecretsFailExposure(t *testing.T) {
	dir := t.TempDir()
	ghp, akia := "ghp_"+strings.Repeat("c5Dq", 9), "AKIAIOSFODNN7EXAMPLE"
	files, _ := filepath.Glob("../../testdata/captures/h200-pinned/*.csv")
	for _, p := range files {
		b := string(readFile(t, p))
		switch {
		case strings.HasSuffix(p, "_cuda_api_trace.csv"):
			b = strings.Replace(b, ",pinned\n", ",pinned "+ghp+"\n", 1)
		case strings.Contains(p, "_nvtx_"):
			b = strings.ReplaceAll(b, ":h2d-pageable", ":h2d-pageable "+akia)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(p)), []byte(b))
	}
	code, out, errOut := runMain(t, []string{"verify", "--fail-on-exposure", dir})
	if code != exitExposed {
		t.Errorf("verify --fail-on-exposure: exit %d, want %d\n%s%s", code, exitExposed, out, errOut)
	}
	words := strings.Join(strings.Fields(out), " ")
	for _, s := range []string{"row 2 column Thread Name", "(AWS access key id)=AKIA…(20 chars)"} {
		if !strings.Contains(words, s) {
			t.Errorf("verify does not report %q:\n%s", s, out)
		}
	}
	_, aout, aerr := runMain(t, []string{"audit", dir})
	if !strings.Contains(aout, "capture-exposes") {
		t.Errorf("audit does not warn of the exposure:\n%s", aout)
	}
	for _, s := range []string{ghp, akia} {
		if strings.Contains(out+errOut+aout+aerr, s) {
			t.Errorf("%q is printed", s)
		}
	}
}
