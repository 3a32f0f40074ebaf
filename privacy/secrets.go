package privacy

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The credential formats FindSecrets tells apart (Secret.Format).
const (
	FormatNamed        = "named value"           // password=X, --token X, "secret": "X", Password=X;
	FormatURL          = "URL with a password"   // scheme://user:password@host
	FormatPrivateKey   = "private key"           // -----BEGIN ... PRIVATE KEY----- block
	FormatAWSKeyID     = "AWS access key id"     // AKIA..., ASIA...
	FormatAWSSecret    = "AWS secret access key" // 40 characters beside an access key id
	FormatGoogle       = "Google API key"        // AIza...
	FormatStripe       = "Stripe key"            // sk_live_, rk_live_, sk_test_, rk_test_
	FormatGitHub       = "GitHub token"          // ghp_, gho_, ghs_, ghu_, ghr_, github_pat_
	FormatGitLab       = "GitLab token"          // glpat-
	FormatSlack        = "Slack token"           // xoxb-, xoxp-, xoxa-, ... (xox?-)
	FormatNpm          = "npm token"             // npm_
	FormatHuggingFace  = "Hugging Face token"    // hf_
	FormatOpenAI       = "OpenAI key"            // sk-
	FormatJWT          = "JWT"                   // eyJ....eyJ....signature
	FormatBearer       = "bearer token"          // Bearer X (an Authorization header)
	FormatPyPI         = "PyPI token"            // pypi-AgEI...
	FormatDocker       = "Docker token"          // dckr_pat_
	FormatSendGrid     = "SendGrid key"          // SG.<id>.<secret>
	FormatDigitalOcean = "DigitalOcean token"    // dop_v1_, doo_v1_, dor_v1_
	FormatGoogleOAuth  = "Google OAuth token"    // ya29.
	FormatAzureSAS     = "Azure SAS signature"   // sig=... in a shared access signature URL
	FormatNVIDIA       = "NVIDIA API key"        // nvapi-
	FormatDatabricks   = "Databricks token"      // dapi
	FormatSlackHook    = "Slack webhook"         // hooks.slack.com/services/...
	FormatSignedURL    = "signed URL signature"  // X-Amz-Signature=, X-Goog-Signature=
	FormatVault        = "HashiCorp Vault token" // hvs., hvb., hvr.
	FormatGrafana      = "Grafana token"         // glc_, glsa_
	FormatSentry       = "Sentry token"          // sntrys_, sntryu_
	FormatGroq         = "Groq key"              // gsk_
	FormatReplicate    = "Replicate token"       // r8_
	FormatShopify      = "Shopify token"         // shpat_, shpss_, shpca_, shppa_
	FormatNewRelic     = "New Relic key"         // NRAK-
	FormatAtlassian    = "Atlassian token"       // ATATT3
	FormatAge          = "age secret key"        // AGE-SECRET-KEY-1
	FormatDiscordHook  = "Discord webhook"       // discord.com/api/webhooks/...
)

// Secret is a credential found inside a string by FindSecrets.
type Secret struct {
	// Name is what names the secret: the option or variable ("password"
	// for --password=X, "GITHUB_TOKEN" for GITHUB_TOKEN=X), "" for a bare
	// token or a credential URL.
	Name string
	// Value is the secret itself: the option's or variable's value, the
	// whole token, or the whole scheme://user:password@host.
	Value string
	// Offset is the byte offset of Value in the searched string.
	Offset int
	// Format is the kind of credential (FormatNamed, FormatGitHub, ...).
	Format string
}

// tokenFormat is a credential format told by its prefix: the prefix, then
// at least min bytes of class.
type tokenFormat struct {
	prefix string
	min    int
	format string
	class  *[256]bool
	// loose lets the prefix follow "_" or "-" (notes_ghp_...): for
	// prefixes no word starts with. Others must not follow a token byte,
	// so that "task-..." holds no "sk-" key.
	loose bool
	// shape, when set, checks the token's first bytes further (up to
	// tokenHead of them).
	shape func(head string) bool
	// valid, when set, checks the token's body (the bytes after the
	// prefix) whole.
	valid func(body string) bool
}

var (
	alnumByte    = byteClass(func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' })
	upperNumByte = byteClass(func(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' })
	// tokenByte is a byte a credential token may hold (isTokenByte).
	tokenByte = byteClass(isTokenByte)
	jwtByte   = byteClass(func(c byte) bool { return isTokenByte(c) || c == '.' })
	// patByte: GitHub's fine-grained tokens hold "_" after the prefix.
	patByte = byteClass(func(c byte) bool { return alnumByte[c] || c == '_' })
	// sendGridByte: a SendGrid key's two base64url parts and the dot
	// between them.
	sendGridByte = byteClass(func(c byte) bool { return isTokenByte(c) || c == '.' })
	// sasByte: a shared access signature's base64, URL-encoded (%2B, %2F,
	// %3D) or not.
	sasByte = byteClass(func(c byte) bool { return alnumByte[c] || strings.IndexByte("%+/=", c) >= 0 })
	// hookByte: a webhook URL's path after its prefix (T…/B…/secret).
	hookByte = byteClass(func(c byte) bool { return alnumByte[c] || c == '/' })
	// discordHookByte: a Discord webhook's id, "/", and its token.
	discordHookByte = byteClass(func(c byte) bool { return tokenByte[c] || c == '/' })
)

// tokenFormats are the well-known credential formats told by a prefix,
// with the characters each format's token is made of.
var tokenFormats = []tokenFormat{
	{prefix: "ghp_", min: 20, format: FormatGitHub, class: alnumByte, loose: true},
	{prefix: "gho_", min: 20, format: FormatGitHub, class: alnumByte, loose: true},
	{prefix: "ghs_", min: 20, format: FormatGitHub, class: alnumByte, loose: true},
	{prefix: "ghu_", min: 20, format: FormatGitHub, class: alnumByte, loose: true},
	{prefix: "ghr_", min: 20, format: FormatGitHub, class: alnumByte, loose: true},
	{prefix: "github_pat_", min: 20, format: FormatGitHub, class: patByte, loose: true},
	{prefix: "glpat-", min: 16, format: FormatGitLab, class: tokenByte, loose: true},
	{prefix: "xox", min: 18, format: FormatSlack, class: tokenByte, loose: true, shape: slackShape},
	{prefix: "sk_live_", min: 16, format: FormatStripe, class: alnumByte, loose: true},
	{prefix: "rk_live_", min: 16, format: FormatStripe, class: alnumByte, loose: true},
	{prefix: "sk_test_", min: 16, format: FormatStripe, class: alnumByte, loose: true},
	{prefix: "rk_test_", min: 16, format: FormatStripe, class: alnumByte, loose: true},
	{prefix: "npm_", min: 36, format: FormatNpm, class: alnumByte, loose: true},
	{prefix: "AIza", min: 35, format: FormatGoogle, class: tokenByte, loose: true},
	{prefix: "AKIA", min: 16, format: FormatAWSKeyID, class: upperNumByte, loose: true},
	{prefix: "ASIA", min: 16, format: FormatAWSKeyID, class: upperNumByte, loose: true},
	{prefix: "eyJ", min: 10, format: FormatJWT, class: jwtByte, loose: true},
	{prefix: "sk-", min: 20, format: FormatOpenAI, class: tokenByte},
	{prefix: "hf_", min: 20, format: FormatHuggingFace, class: alnumByte},
	{prefix: "pypi-AgEI", min: 32, format: FormatPyPI, class: tokenByte, loose: true},
	{prefix: "dckr_pat_", min: 20, format: FormatDocker, class: tokenByte, loose: true},
	{prefix: "SG.", min: 40, format: FormatSendGrid, class: sendGridByte, valid: sendGridShape},
	{prefix: "dop_v1_", min: 32, format: FormatDigitalOcean, class: alnumByte, loose: true},
	{prefix: "doo_v1_", min: 32, format: FormatDigitalOcean, class: alnumByte, loose: true},
	{prefix: "dor_v1_", min: 32, format: FormatDigitalOcean, class: alnumByte, loose: true},
	{prefix: "ya29.", min: 30, format: FormatGoogleOAuth, class: tokenByte, loose: true},
	{prefix: "xapp-", min: 20, format: FormatSlack, class: tokenByte, loose: true},
	{prefix: "sig=", min: 30, format: FormatAzureSAS, class: sasByte},
	{prefix: "nvapi-", min: 40, format: FormatNVIDIA, class: tokenByte, loose: true},
	{prefix: "dapi", min: 32, format: FormatDatabricks, class: tokenByte, valid: hexHead},
	{prefix: "hooks.slack.com/services/", min: 20, format: FormatSlackHook, class: hookByte, loose: true},
	{prefix: "X-Amz-Signature=", min: 32, format: FormatSignedURL, class: alnumByte, loose: true},
	{prefix: "X-Goog-Signature=", min: 32, format: FormatSignedURL, class: alnumByte, loose: true},
	{prefix: "hvs.", min: 24, format: FormatVault, class: tokenByte, loose: true},
	{prefix: "hvb.", min: 24, format: FormatVault, class: tokenByte, loose: true},
	{prefix: "hvr.", min: 24, format: FormatVault, class: tokenByte, loose: true},
	{prefix: "glc_", min: 32, format: FormatGrafana, class: tokenByte, loose: true},
	{prefix: "glsa_", min: 32, format: FormatGrafana, class: tokenByte, loose: true},
	{prefix: "sntrys_", min: 40, format: FormatSentry, class: tokenByte, loose: true},
	{prefix: "sntryu_", min: 40, format: FormatSentry, class: alnumByte, loose: true},
	{prefix: "gsk_", min: 40, format: FormatGroq, class: alnumByte, loose: true},
	{prefix: "r8_", min: 30, format: FormatReplicate, class: alnumByte},
	{prefix: "shpat_", min: 32, format: FormatShopify, class: alnumByte, loose: true},
	{prefix: "shpss_", min: 32, format: FormatShopify, class: alnumByte, loose: true},
	{prefix: "shpca_", min: 32, format: FormatShopify, class: alnumByte, loose: true},
	{prefix: "shppa_", min: 32, format: FormatShopify, class: alnumByte, loose: true},
	{prefix: "NRAK-", min: 27, format: FormatNewRelic, class: upperNumByte, loose: true},
	{prefix: "ATATT3", min: 60, format: FormatAtlassian, class: tokenByte, loose: true},
	{prefix: "AGE-SECRET-KEY-1", min: 50, format: FormatAge, class: upperNumByte, loose: true},
	{prefix: "discord.com/api/webhooks/", min: 40, format: FormatDiscordHook, class: discordHookByte, loose: true},
}

// hexHead: a Databricks token's body starts with 32 hex digits (dapi,
// then the digits, then at times "-2"), which a word after "dapi" does not.
func hexHead(body string) bool {
	if len(body) < 32 {
		return false
	}
	for _, c := range []byte(body[:32]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// sendGridShape: a SendGrid key's body is its id, a dot, and its secret
// (SG.<22 bytes>.<43 bytes>).
func sendGridShape(body string) bool {
	id, secret, ok := strings.Cut(body, ".")
	return ok && len(id) >= 16 && len(id) <= 32 && len(secret) >= 32 && !strings.Contains(secret, ".")
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// startsAfter reports whether a token of format f may start after the
// byte before it.
func (f *tokenFormat) startsAfter(before byte) bool {
	if f.loose {
		return !alnumByte[before]
	}
	return !tokenByte[before]
}

// afterEscape reports whether before ends with the escape of a character
// as nsyscheck writes them: ctlchar's \xNN and \uNNNN, JSON's \uNNNN,
// and Go's quoted \a \b \f \n \r \t \v. A control character before a
// token is a boundary in the raw string; once the string is escaped (an
// error quoting a cell, a name in JSON), the escape's last letter or digit
// would otherwise glue itself to the token and hide it from the mask.
func afterEscape(before string) bool {
	n := len(before)
	hexTail := func(digits int) bool {
		if n < digits+2 || before[n-digits-2] != '\\' {
			return false
		}
		for _, c := range []byte(before[n-digits:]) {
			if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
				return false
			}
		}
		return true
	}
	switch {
	case n >= 2 && before[n-2] == '\\' && strings.IndexByte("abfnrtv", before[n-1]) >= 0:
		return true
	case hexTail(2) && before[n-3] == 'x', hexTail(4) && before[n-5] == 'u':
		return true
	}
	return afterCSI(before)
}

// afterCSI reports whether before ends with a terminal's control sequence
// (ECMA-48 CSI: ESC [ or the one byte 0x9b, parameter bytes 0x30-0x3f,
// intermediate bytes 0x20-0x2f, a final byte 0x40-0x7e), raw or with its
// introducer escaped as nsyscheck writes it (\x1b[, \u001b[, \u009b):
// the sequence's final letter ("J" of clear screen) would otherwise glue
// itself to a token after it.
func afterCSI(before string) bool {
	n := len(before)
	if n < 2 || before[n-1] < 0x40 || before[n-1] > 0x7e {
		return false
	}
	i := n - 1
	for i > 0 && before[i-1] >= 0x20 && before[i-1] <= 0x3f {
		i--
	}
	head := before[:i]
	for _, intro := range []string{`\x1b[`, `\x1B[`, `\u001b[`, `\u001B[`, `\x9b`, `\x9B`, `\u009b`, `\u009B`, "\x1b[", "\u009b"} {
		if strings.HasSuffix(head, intro) {
			return true
		}
	}
	return false
}

// tokenHead is how many of a token's first bytes tokenFormat.shape sees.
const tokenHead = 8

// slackShape: xox, a letter, "-", then the token (xoxb-, xoxp-, xoxe-...).
func slackShape(head string) bool {
	return len(head) > 5 && head[3] >= 'a' && head[3] <= 'z' && head[4] == '-'
}

// tokenRun is a run of a token format's bytes after a prefix, read once:
// every prefix found inside it is checked against it, so that a run holding
// many prefixes costs its length, not its length times their number.
type tokenRun struct {
	from, end int    // the run's bytes [from, end) in the string or file
	text      string // those bytes
	trimmed   int    // end, less the dots that cannot end a JWT
	dots      []int  // a JWT run's dots before trimmed
}

func newTokenRun(tf *tokenFormat, from int, text string) *tokenRun {
	r := &tokenRun{from: from, end: from + len(text), text: text, trimmed: from + len(text)}
	if tf.class['.'] {
		// A sentence's full stop ends no token.
		r.trimmed = from + len(strings.TrimRight(text, "."))
	}
	if tf.format == FormatJWT {
		for j := 0; j < r.trimmed-from; j++ {
			if text[j] == '.' {
				r.dots = append(r.dots, from+j)
			}
		}
	}
	return r
}

// covers reports whether the run read holds the bytes from body on.
func (r *tokenRun) covers(body int) bool { return r != nil && body >= r.from && body <= r.end }

// token returns the end of the token of format tf whose prefix starts at
// i, with its body inside the run r, and whether it is one: at least min
// bytes of the format's class, of the format's shape. head is the token's
// first bytes.
func (tf *tokenFormat) token(r *tokenRun, i int, head string) (int, bool) {
	body := i + len(tf.prefix)
	if r.trimmed-body < tf.min || tf.shape != nil && !tf.shape(head) {
		return 0, false
	}
	if tf.format == FormatJWT && !r.jwtAt(i, body) {
		return 0, false
	}
	if tf.valid != nil && !tf.valid(r.text[body-r.from:r.trimmed-r.from]) {
		return 0, false
	}
	return r.trimmed, true
}

// jwtAt reports whether the run holds, from the prefix at i to its end, a
// JWT: a header and a payload that are both base64url-encoded JSON objects
// ("eyJ" encodes `{"`) and a signature, apart by two dots.
func (r *tokenRun) jwtAt(i, body int) bool {
	k := sort.SearchInts(r.dots, body)
	if len(r.dots)-k != 2 {
		return false
	}
	d1, d2 := r.dots[k], r.dots[k+1]
	payload := r.text[d1+1-r.from : d2-r.from]
	return d1-i >= 13 && len(payload) >= 6 && strings.HasPrefix(payload, "eyJ") && r.trimmed > d2+1
}

// urlCredRE matches scheme://user:password@host. The user and password may
// not hold "/" or white space; the user may be empty (redis://:password@host)
// and holds no ":" or "@"; the password must not be empty and runs to the
// authority's last "@" (p@ss written unescaped is all of it), so the host
// holds no "@".
var urlCredRE = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.\-]*)://([^/\s:@"';]*):([^/\s"';]+)@([^/\s"';@]+)`)

// escapedURLCredRE matches the same URL with its slashes escaped as JSON
// writes them: scheme:\/\/user:password@host or scheme:\u002F\u002F...; the
// user, password and host hold no backslash.
var escapedURLCredRE = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.\-]*):(?:\\/|\\u002[fF]){2}([^/\\\s:@"';]*):([^/\\\s"';]+)@([^/\\\s"';@]+)`)

// URLCredential is a user:password pair found in a URL.
type URLCredential struct {
	URL      string // the whole match, scheme://user:password@host (its slashes escaped, as it stood)
	Scheme   string
	User     string
	Password string
	Host     string
	Offset   int // byte offset of the match in the searched text
}

// URLCredentials returns every scheme://user:password@host in s, and every
// one whose slashes JSON escaped (scheme:\/\/user:password@host,
// scheme:\u002F\u002Fuser:password@host), in the order of their offsets.
func URLCredentials(s string) []URLCredential {
	out := urlCredentials(s, urlCredRE)
	if strings.Contains(s, `:\/\/`) || strings.Contains(s, `:\u002`) {
		esc := urlCredentials(s, escapedURLCredRE)
		if len(esc) > 0 {
			out = append(out, esc...)
			sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
		}
	}
	return out
}

func urlCredentials(s string, re *regexp.Regexp) []URLCredential {
	if re == urlCredRE && !strings.Contains(s, "://") {
		return nil
	}
	var out []URLCredential
	// The matches first (a fast scan), then each one's parts.
	for _, whole := range re.FindAllStringIndex(s, -1) {
		m := re.FindStringSubmatchIndex(s[whole[0]:whole[1]])
		for i := range m {
			m[i] += whole[0]
		}
		out = append(out, URLCredential{
			URL:      s[m[0]:m[1]],
			Scheme:   s[m[2]:m[3]],
			User:     s[m[4]:m[5]],
			Password: s[m[6]:m[7]],
			Host:     s[m[8]:m[9]],
			Offset:   m[0],
		})
	}
	return out
}

// LooksSecretValue reports whether a value looks like a credential on its
// own, whatever names it: a URL with a user and password, a private key, or
// a token of a well-known format (FindSecrets, less the named values).
func LooksSecretValue(value string) bool {
	for _, s := range FindSecrets(value) {
		if s.Format != FormatNamed {
			return true
		}
	}
	return false
}

// FindSecrets is the one secret detector: it returns every credential in s,
// whatever the string is (a command line, a process name, an NVTX range's
// text, a thread name, a table or column name, a StringIds value, an
// environment entry, a line nsyscheck prints). It reports
//
//   - a URL with a user and password, its slashes escaped as JSON writes
//     them or not;
//   - a private key (a PEM block: from its BEGIN line to its END line, or
//     to the end of its base64 body where the END line is missing);
//   - the value of NAME=VALUE, --NAME=VALUE and -NAME=VALUE arguments (s
//     is split at white space and NUL bytes, quotes around an argument are
//     not part of it, a value opening a quote runs to its closing quote,
//     and the quote closing a string the value stood in, and what follows
//     it, is not part of it), and the argument after --NAME or -NAME
//     unless it is another option, where NAME names a secret (secretName:
//     password, passwd, secret, token, api_key, client_secret, MYSQL_PWD,
//     private_key_id, oauth2-bearer, ...); after curl, the password of -u
//     USER:PASSWORD (--user, -U, --proxy-user); after a MySQL or MariaDB
//     client (mysqlCommands), the password of -pPASSWORD; after aws
//     configure set, the value of aws_secret_access_key, aws_access_key_id
//     and aws_session_token; after wandb login, a 40-digit hex key; the
//     password of sshpass -p, of redis-cli -a and --pass, of docker and
//     podman login -p; a .netrc entry's password (machine HOST login USER
//     password PASSWORD);
//   - the same names followed by "=" or ":" anywhere else (password: X,
//     "token": "X", Server=db;Password=X;, ?api_key=X&), the value quoted
//     or running to white space or punctuation, a scheme word before it
//     skipped (Authorization: Basic X); counts and flags (tokens: 512,
//     auth=true) and unexpanded variables ($TOKEN) are not secrets;
//   - tokens of well-known formats (tokenFormats: GitHub, GitLab, Slack,
//     Stripe, npm, PyPI, Docker, SendGrid, DigitalOcean, Google API keys
//     and OAuth tokens, AWS access key ids, Azure SAS signatures, JWTs,
//     OpenAI and Hugging Face keys, HashiCorp Vault, Grafana, Sentry, Groq,
//     Replicate, Shopify, New Relic and Atlassian tokens, age secret keys,
//     Discord webhooks), and a bearer token after "Bearer ";
//   - in a string holding an AWS access key id, the 40-character secret
//     access key beside it.
//
// Values already masked or Redacted are not secrets. The results are in
// the order of their offsets and do not overlap.
func FindSecrets(s string) []Secret {
	f := &finder{s: s}
	for _, c := range URLCredentials(s) {
		f.add("", c.URL, c.Offset, FormatURL)
	}
	f.endPass()
	for _, pass := range []func(){f.privateKeys, f.namedArgs, f.namedValues, f.bearers} {
		pass()
		f.endPass()
	}
	for i := range tokenFormats {
		f.tokens(&tokenFormats[i])
		f.endPass()
	}
	f.awsSecrets()
	f.endPass()
	return f.done
}

// finder gathers the secrets of one string, one pass of a detector after
// another; a secret overlapping one found before is dropped. Each check
// costs a binary search, so that a string holding many secrets takes time
// in proportion to its length.
type finder struct {
	s    string
	done []Secret // the earlier passes', by offset, apart
	pass []Secret // this pass's, by offset as the detectors find them
}

// add records a secret unless it is empty, already masked, or overlaps one
// found already.
func (f *finder) add(name, value string, off int, format string) {
	if value == "" || masked(value) {
		return
	}
	end := off + len(value)
	i := sort.Search(len(f.done), func(i int) bool { return f.done[i].Offset+len(f.done[i].Value) > off })
	if i < len(f.done) && f.done[i].Offset < end {
		return // inside one found already
	}
	n := len(f.pass)
	if n > 0 && off >= f.pass[n-1].Offset {
		if last := f.pass[n-1]; last.Offset+len(last.Value) > off {
			return
		}
	} else {
		for _, o := range f.pass {
			if off < o.Offset+len(o.Value) && o.Offset < end {
				return
			}
		}
	}
	f.pass = append(f.pass, Secret{Name: name, Value: value, Offset: off, Format: format})
}

// endPass merges this pass's secrets into the earlier ones, by offset.
func (f *finder) endPass() {
	if len(f.pass) == 0 {
		return
	}
	sort.SliceStable(f.pass, func(i, j int) bool { return f.pass[i].Offset < f.pass[j].Offset })
	merged := make([]Secret, 0, len(f.done)+len(f.pass))
	i, j := 0, 0
	for i < len(f.done) || j < len(f.pass) {
		if j == len(f.pass) || i < len(f.done) && f.done[i].Offset < f.pass[j].Offset {
			merged = append(merged, f.done[i])
			i++
		} else {
			merged = append(merged, f.pass[j])
			j++
		}
	}
	f.done, f.pass = merged, f.pass[:0]
}

// masked reports whether a value is one nsyscheck already masked: Mask's
// "…(19 chars)" or "ghp_…(40 chars)" (or "ghp_…", where the value was cut
// at its "(" or at white space), or Redacted.
func masked(v string) bool {
	// A value read up to white space may take in the quote and the
	// parenthesis closing it (SQL's DEFAULT 'X=[redacted]').
	t := strings.TrimRight(strings.Trim(v, `"'`), `"'),;`)
	// Mask shows at most a format's prefix (github_pat_) before its "…(".
	return t == Redacted || strings.Contains(v[:min(len(v), 16)], "…(") || strings.HasSuffix(v, "…")
}

// pemBegin starts a private key block; pemEnd its last line.
var (
	pemBegin = regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)
)

// privateKeys finds PEM private key blocks.
func (f *finder) privateKeys() {
	if !strings.Contains(f.s, "-----BEGIN") {
		return
	}
	ends := pemEnd.FindAllStringIndex(f.s, -1)
	last := 0 // the end of the last block: a BEGIN inside it is part of it
	for _, m := range pemBegin.FindAllStringIndex(f.s, -1) {
		if m[0] < last {
			continue
		}
		for len(ends) > 0 && ends[0][0] < m[1] {
			ends = ends[1:]
		}
		end := pemBodyEnd(f.s, m[1])
		if len(ends) > 0 {
			end = ends[0][1]
		}
		f.add("", f.s[m[0]:end], m[0], FormatPrivateKey)
		last = end
	}
}

// pemBodyEnd returns where the base64 body of a key block starting at i
// ends: its lines (as they are, or with their line ends escaped as \n in
// JSON) and the header lines of an encrypted key.
func pemBodyEnd(s string, i int) int {
	end := i
	for j := i; j < len(s); {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s) && (s[j+1] == 'n' || s[j+1] == 'r'):
			j += 2
			continue
		case c == '\n' || c == '\r' || c == ' ' || c == '\t':
			j++
			continue
		case alnumByte[c] || c == '+' || c == '/' || c == '=' || c == ':' || c == ',' || c == '-':
			j++
			end = j
			continue
		}
		break
	}
	return end
}

// arg is one argument of a string split by splitArgs.
type arg struct {
	text string
	off  int
}

// namedArgs finds NAME=VALUE, --NAME=VALUE and --NAME VALUE arguments whose
// name names a secret.
func (f *finder) namedArgs() {
	args := splitArgs(f.s)
	curl := false  // after curl, -u USER:PASSWORD gives a password
	mysql := false // after mysql, mysqldump, ..., -pPASSWORD does
	wandb := -1    // the offset in args of wandb's login
	// after redis-cli, -a PASSWORD and --pass PASSWORD; after docker or
	// podman login, -p PASSWORD: the options whose value is a password.
	var pwOpts map[string]bool
	for i, a := range args {
		text := a.text
		opt := strings.TrimLeft(text, "-")
		base := text[strings.LastIndexByte(text, '/')+1:]
		switch {
		case curlCommand(base):
			curl = true
		case mysqlCommand(base) && commandAt(args, i):
			mysql = true
		case strings.HasSuffix(base, "wandb") && i+1 < len(args) && args[i+1].text == "login": // glued bytes too, as mysqlCommand
			wandb = i + 1
		case strings.HasSuffix(base, "redis-cli"): // glued bytes too, as curlCommand
			pwOpts = redisPasswordOpts
		case loginCommand(base) && i+1 < len(args) && args[i+1].text == "login":
			pwOpts = loginPasswordOpts
		case text == "|" || text == "&&" || text == "||" || strings.HasSuffix(text, ";"):
			curl, mysql, wandb, pwOpts = false, false, -1, nil // the next command
		}
		if i > 0 && strings.HasPrefix(text, "-p") && sshpassCommand(args[i-1].text) {
			// sshpass -p PASSWORD, sshpass -pPASSWORD
			v, at := text[2:], a.off+2
			if v == "" && i+1 < len(args) {
				v, at = args[i+1].text, args[i+1].off
				if qv, ok := f.quoted(at, v); ok {
					v, at = qv, at+1
				}
			}
			if v = trimClose(v); secretValue("password", v) {
				f.add("password", v, at, FormatNamed)
			}
			continue
		}
		if pwOpts[opt] && opt != text && i+1 < len(args) && !strings.HasPrefix(args[i+1].text, "-") {
			f.addPassword(args[i+1])
			continue
		}
		if mysql && len(text) > 2 && text[0] == '-' && text[1] == 'p' {
			if v, q := unquote(text[2:]); secretValue("password", trimClose(v)) {
				v = trimClose(v)
				f.add("password", v, a.off+2+q, FormatNamed)
			}
			continue
		}
		if wandb >= 0 && i > wandb && isHexKey(text) {
			f.add("wandb_api_key", text, a.off, FormatNamed)
			continue
		}
		if text == "set" && i > 0 && args[i-1].text == "configure" && i+2 < len(args) {
			// aws configure set [profile.NAME.]aws_secret_access_key VALUE
			name := args[i+1].text
			name = name[strings.LastIndexByte(name, '.')+1:]
			if v := args[i+2]; awsConfigKeys[strings.ToLower(name)] && secretValue(name, trimClose(v.text)) {
				f.add(name, trimClose(v.text), v.off, FormatNamed)
			}
		}
		if curl && opt != text && curlUserOpts[opt] && i+1 < len(args) {
			next := args[i+1]
			if _, pw, ok := strings.Cut(next.text, ":"); ok && secretValue("user", trimClose(pw)) {
				f.add("password", trimClose(pw), next.off+len(next.text)-len(pw), FormatNamed)
			}
			continue
		}
		if name, value, ok := strings.Cut(opt, "="); ok && curl && opt != text && curlUserOpts[name] {
			if _, pw, ok := strings.Cut(value, ":"); ok && secretValue("user", trimClose(pw)) {
				f.add("password", trimClose(pw), a.off+len(text)-len(pw), FormatNamed)
			}
			continue
		}
		if text == "password" && i+1 < len(args) && netrcEntry(args, i) {
			// .netrc: machine HOST login USER password PASSWORD
			f.addPassword(args[i+1])
			continue
		}
		if name, value, ok := strings.Cut(opt, "="); ok {
			at := a.off + len(text) - len(opt) + len(name) + 1
			v, q := unquote(value)
			v = trimClose(v)
			if qv, ok := f.quoted(at, value); ok {
				v, q = qv, 1
			}
			if allNameBytes(name) && secretName(name) && secretValue(name, v) {
				f.add(name, v, at+q, FormatNamed)
			}
		} else if opt != text && secretName(opt) && i+1 < len(args) && !strings.HasPrefix(args[i+1].text, "-") {
			next := args[i+1]
			v, at := trimClose(next.text), next.off
			if qv, ok := f.quoted(next.off, next.text); ok {
				v, at = qv, next.off+1
			}
			if secretValue(opt, v) {
				f.add(opt, v, at, FormatNamed)
			}
		}
	}
}

// addPassword adds the word w, a password given after the word that names
// it, as a password: the quoted string it opens whole, where it opens one.
func (f *finder) addPassword(w arg) {
	v, at := trimClose(w.text), w.off
	if qv, ok := f.quoted(w.off, w.text); ok {
		v, at = qv, w.off+1
	}
	if secretValue("password", v) {
		f.add("password", v, at, FormatNamed)
	}
}

// netrcEntry reports whether args[i], "password", is a .netrc entry's:
// the word two before it is login or machine (machine HOST login USER
// password PASSWORD, default login USER password PASSWORD, machine HOST
// password PASSWORD). The distance is fixed, not a reach: masking a
// secret of several words between them leaves two, so a mask never brings
// login that close to a password that was not.
func netrcEntry(args []arg, i int) bool {
	return i >= 2 && (args[i-2].text == "login" || args[i-2].text == "machine")
}

// commandAt reports whether args[i] stands where a command's name does:
// opening a quoted string, first, after a shell's separator, after
// NAME=VALUE settings or a word that runs the command after it (sudo, env,
// exec, time, nohup).
func commandAt(args []arg, i int) bool {
	if t := args[i].text; t[0] == '"' || t[0] == '\'' {
		return true // the first word of a quoted command: {"cmd": "mysql -pX"}
	}
	for i > 0 {
		p := args[i-1].text
		switch {
		case p == "|" || p == "&&" || p == "||" || strings.HasSuffix(p, ";"):
			return true
		case p == "sudo" || p == "env" || p == "exec" || p == "time" || p == "nohup":
		case strings.IndexByte(p, '=') > 0 && p[0] != '-':
		default:
			return false
		}
		i--
	}
	return true
}

// mysqlCommands are the MySQL and MariaDB clients whose -pPASSWORD (the
// password glued to -p) is a password.
var mysqlCommands = map[string]bool{"mysql": true, "mysqldump": true, "mysqladmin": true, "mariadb": true,
	"mysqlimport": true, "mysqlshow": true, "mysqlcheck": true, "mariadb-dump": true, "mariadb-admin": true}

// mysqlCommand reports whether base, a command's file name, is one of
// mysqlCommands; it may follow other bytes, as the bytes of a record's
// header glue themselves to a deleted command line's first word.
func mysqlCommand(base string) bool {
	if !strings.Contains(base, "mysql") && !strings.Contains(base, "mariadb") {
		return false
	}
	base = strings.TrimSuffix(base, ".exe")
	for c := range mysqlCommands {
		if strings.HasSuffix(base, c) && (len(base) == len(c) || !strings.HasSuffix(base, "lib"+c)) {
			return true
		}
	}
	return false
}

// quoted returns the value of a word that opens a quote it does not close
// (a passphrase of several words: --password "my secret phrase",
// PASSWORD='a b'): the string from the word's quote, at off in the
// searched string, to the same quote closing it on the same line. ok is
// false for a word not quoted, or quoted whole, or a quote never closed.
func (f *finder) quoted(off int, word string) (string, bool) {
	if len(word) == 0 || word[0] != '"' && word[0] != '\'' {
		return "", false
	}
	q := word[0]
	if len(word) >= 2 && strings.IndexByte(word[1:], q) >= 0 {
		return "", false // closed inside the word: unquote's and trimClose's
	}
	for j := off + 1; j < len(f.s) && f.s[j] != '\n'; j++ {
		if f.s[j] == q && f.s[j-1] != '\\' {
			return f.s[off+1 : j], true
		}
	}
	return "", false
}

// trimClose drops from a value read to white space the quote that closes
// the string it stood in and the punctuation after it: in
// {"cmd": "run --password X"}, the word after --password is X"}, the
// password X. A quote followed by anything else is the value's own.
func trimClose(v string) string {
	i := strings.IndexAny(v, `"'`)
	if i <= 0 || strings.Trim(v[i+1:], `"',;:)]}`) != "" {
		return v
	}
	return v[:i]
}

// The options whose value is a password after redis-cli, and after
// docker login or podman login (loginCommand).
var (
	redisPasswordOpts = map[string]bool{"a": true, "pass": true}
	loginPasswordOpts = map[string]bool{"p": true}
)

// loginCommand reports whether base is docker's or podman's, whose login
// takes -p PASSWORD (glued bytes before it too, as curlCommand's).
func loginCommand(base string) bool {
	return strings.HasSuffix(base, "docker") || strings.HasSuffix(base, "podman")
}

// sshpassCommand reports whether the word text is sshpass, whose -p gives
// the password (a path to it, glued bytes before it too).
func sshpassCommand(text string) bool {
	return strings.HasSuffix(text[strings.LastIndexByte(text, '/')+1:], "sshpass")
}

// curlCommand reports whether base, a command's file name, is curl's; it
// may follow other bytes, as mysqlCommand's may (a deleted row's record
// header glued to "curl"), but not "lib" (libcurl names no command).
func curlCommand(base string) bool {
	base = strings.TrimSuffix(base, ".exe")
	return strings.HasSuffix(base, "curl") && !strings.HasSuffix(base, "libcurl")
}

// awsConfigKeys are the settings aws configure set writes a credential to.
var awsConfigKeys = map[string]bool{"aws_secret_access_key": true, "aws_access_key_id": true, "aws_session_token": true}

// isHexKey reports whether v is a Weights & Biases API key: 40 hex digits,
// after "local-" and a name for a local server's.
func isHexKey(v string) bool {
	if i := strings.LastIndexByte(v, '-'); i >= 0 && strings.HasPrefix(v, "local-") {
		v = v[i+1:]
	}
	if len(v) != 40 {
		return false
	}
	for _, c := range []byte(v) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// curlUserOpts are curl's options whose value is USER:PASSWORD.
var curlUserOpts = map[string]bool{"u": true, "user": true, "U": true, "proxy-user": true}

// unquote strips one quote from the start of v and the same quote from
// its end, and says how many bytes it took from the start (0 or 1).
func unquote(v string) (string, int) {
	if v == "" || v[0] != '"' && v[0] != '\'' {
		return v, 0
	}
	return strings.TrimSuffix(v[1:], v[:1]), 1
}

// splitArgs splits s at white space and NUL bytes; quotes around an
// argument are dropped.
func splitArgs(s string) []arg {
	var out []arg
	i := 0
	for i < len(s) {
		for i < len(s) && isArgSep(s[i]) {
			i++
		}
		start := i
		for i < len(s) && !isArgSep(s[i]) {
			i++
		}
		if i > start {
			a := arg{text: s[start:i], off: start}
			if len(a.text) >= 2 && (a.text[0] == '"' || a.text[0] == '\'') && a.text[len(a.text)-1] == a.text[0] {
				a.text, a.off = a.text[1:len(a.text)-1], a.off+1
			}
			out = append(out, a)
		}
	}
	return out
}

func isArgSep(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 || c == '\v' || c == '\f'
}

// nameByte may be part of a NAME before "=" or ":".
var nameByte = byteClass(func(c byte) bool { return alnumByte[c] || c == '_' || c == '-' || c == '.' })

func allNameBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !nameByte[s[i]] {
			return false
		}
	}
	return true
}

// valueStop ends a value that is not quoted.
var valueStop = byteClass(func(c byte) bool { return c <= ' ' || strings.IndexByte(`"',;&<>()[]{}`, c) >= 0 || c == 0x7f })

// namedValues finds NAME=VALUE and NAME: VALUE wherever they stand.
func (f *finder) namedValues() {
	s := f.s
	v := newValueScan(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		if c == ':' && strings.HasPrefix(s[i+1:], "//") || c == '=' && (i+1 < len(s) && s[i+1] == '=' || i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0) {
			continue // a URL's scheme, a comparison
		}
		if c == ':' && (i+1 < len(s) && s[i+1] == ':' || i > 0 && s[i-1] == ':') {
			continue // a scope, as in C++ symbols: torch::jit::Token::text
		}
		end := i
		if end > 0 && (s[end-1] == '"' || s[end-1] == '\'') {
			end-- // "password": ...
		}
		start := end
		for start > 0 && nameByte[s[start-1]] {
			start--
		}
		name := strings.TrimLeft(s[start:end], "-.")
		if name == "" || !secretName(name) {
			continue
		}
		lo, hi := v.after(i + 1)
		if secretValue(name, s[lo:hi]) {
			f.add(name, s[lo:hi], lo, FormatNamed)
			i = max(i, hi-1) // what the value holds is not looked at again
		}
	}
}

// authSchemes are the words an Authorization value starts with before the
// credential itself.
var authSchemes = []string{"bearer", "basic", "token", "digest", "negotiate", "apikey"}

// valueScan finds the values after "=" and ":" in a string. The ends it
// looks for (a stop byte, a closing quote) are remembered, so that values
// looked for at increasing offsets read each byte once however many
// separators a run of bytes holds.
type valueScan struct {
	s     string
	plain firstFrom // the next byte that ends a value not quoted
	quote [2]firstFrom
}

func newValueScan(s string) *valueScan {
	v := &valueScan{s: s}
	v.plain = firstFrom{s: s, stop: func(j int) bool { return valueStop[s[j]] }}
	for k, q := range []byte{'"', '\''} {
		v.quote[k] = firstFrom{s: s, stop: func(j int) bool {
			return s[j] == '\n' || s[j] == q && (j == 0 || s[j-1] != '\\')
		}}
	}
	return v
}

// after returns the value that starts at i (after "=" or ":"), spaces
// and one opening quote skipped, as the offsets [lo, hi): up to the closing
// quote, or to white space or punctuation. A scheme word (Basic, Bearer)
// before the credential is skipped.
func (v *valueScan) after(i int) (lo, hi int) {
	s := v.s
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		k := 0
		if s[i] == '\'' {
			k = 1
		}
		lo, hi = i+1, v.quote[k].find(i+1)
		if sp := strings.IndexByte(s[lo:hi], ' '); sp > 0 && isAuthScheme(s[lo:lo+sp]) {
			w := lo + sp
			for w < hi && s[w] == ' ' {
				w++
			}
			if w < hi {
				return w, hi
			}
		}
		return lo, hi
	}
	hi = v.plain.find(i)
	if isAuthScheme(s[i:hi]) && hi < len(s) && s[hi] == ' ' {
		return v.after(hi)
	}
	return i, hi
}

// firstFrom finds the first offset at or after a start where stop holds
// (or the end of s). It remembers its last answer: for starts that only
// grow, every byte is read once.
type firstFrom struct {
	s        string
	stop     func(j int) bool
	from, at int // no stop in [from, at); at is one, or len(s)
	used     bool
}

func (m *firstFrom) find(k int) int {
	if m.used && k >= m.from && k <= m.at {
		return m.at
	}
	j := k
	for j < len(m.s) && !m.stop(j) {
		j++
	}
	m.from, m.at, m.used = k, j, true
	return j
}

func isAuthScheme(w string) bool {
	for _, a := range authSchemes {
		if strings.EqualFold(w, a) {
			return true
		}
	}
	return false
}

// Words of a name that make it name a secret wherever they stand
// (DB_PASSWORD, SECRET_KEY_BASE, accessToken), and the words before KEY
// that do (API_KEY, SECRET_ACCESS_KEY, privateKey).
var (
	secretNameWords = map[string]bool{"PASSWORD": true, "PASSWD": true, "PASSPHRASE": true, "SECRET": true, "TOKEN": true,
		"CREDENTIAL": true, "CREDENTIALS": true, "AUTHORIZATION": true, "AUTH": true, "APIKEY": true,
		// curl's --oauth2-bearer TOKEN.
		"BEARER": true}
	keyQualifiers = map[string]bool{"API": true, "ACCESS": true, "SECRET": true, "PRIVATE": true, "CLIENT": true,
		"SIGNING": true, "ENCRYPTION": true, "MASTER": true, "AUTH": true, "SSH": true, "ACCOUNT": true,
		// A storage account's key, and the keys of services named by the
		// service alone (KAGGLE_KEY, OPENAI_KEY).
		"STORAGE": true, "KAGGLE": true, "OPENAI": true, "ANTHROPIC": true, "WANDB": true, "NGC": true,
		"GEMINI": true, "COHERE": true, "MISTRAL": true, "GROQ": true, "REPLICATE": true, "PINECONE": true}
	// Glued words: DBPASSWORD, HFSECRET, APITOKEN (not TIKTOKEN).
	gluedSecretWords = []string{"PASSWORD", "PASSWD", "SECRET", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY"}
	tokenQualifiers  = map[string]bool{"API": true, "AUTH": true, "ACCESS": true, "REFRESH": true, "SESSION": true,
		"BOT": true, "GH": true, "HF": true, "NPM": true, "BEARER": true, "ID": true}
	// A last word that makes the name describe a secret, not hold one:
	// DB_PASSWORD_FILE, token_count, SECRET_NAME, auth_mode; or a file's
	// extension, as in the file name my-secret.json before ": ".
	metaWords = map[string]bool{"FILE": true, "FILES": true, "PATH": true, "DIR": true, "NAME": true, "LEN": true,
		"JSON": true, "SQLITE": true, "CSV": true, "TXT": true, "MD": true, "HTML": true, "LOG": true, "REP": true,
		"LENGTH": true, "COUNT": true, "SIZE": true, "TYPE": true, "KIND": true, "MODE": true, "METHOD": true,
		"ID": true, "IDS": true, "MIN": true, "MAX": true, "LIMIT": true, "TTL": true, "EXPIRY": true,
		"EXPIRES": true, "TIMEOUT": true, "ENABLED": true, "DISABLED": true, "REQUIRED": true, "PROVIDER": true,
		"HEADER": true, "FIELD": true, "PARAM": true, "PROMPT": true, "POLICY": true, "USAGE": true}
)

// secretName reports whether an option, variable or key name names a
// secret's value: one of its words is PASSWORD, PASSWD, PASSPHRASE, SECRET,
// TOKEN, CREDENTIAL(S), AUTH or AUTHORIZATION, or KEY after API, ACCESS,
// SECRET, PRIVATE, CLIENT, ... (words split at "_", "-", "." and where
// lower case turns upper: accessToken), or a word ends with PASSWORD,
// SECRET or APIKEY glued on; unless its last word says what the value is
// about (FILE, PATH, COUNT, TYPE, ...). SECRETLY, TOKENS and TIKTOKEN name
// nothing secret.
func secretName(name string) bool {
	if len(name) < 4 || !mayNameSecret(name) { // AUTH, the shortest
		return false
	}
	words := nameWords(name)
	n := len(words)
	if n >= 3 && words[n-3] == "PRIVATE" && words[n-2] == "KEY" && words[n-1] == "ID" {
		return true // a service account's private_key_id (GCP) names its key
	}
	if n == 0 || n > 1 && metaWords[words[n-1]] {
		return false
	}
	for i, w := range words {
		switch {
		case secretNameWords[w]:
			return true
		case w == "PWD" && n > 1:
			return true // MYSQL_PWD, DB_PWD; PWD alone is the working folder
		case w == "KEY" && i > 0 && keyQualifiers[words[i-1]]:
			return true
		case strings.HasSuffix(w, "TOKEN") && tokenQualifiers[strings.TrimSuffix(w, "TOKEN")]:
			return true
		}
		for _, g := range gluedSecretWords {
			if len(w) > len(g) && strings.HasSuffix(w, g) {
				return true
			}
		}
	}
	return false
}

// secretNameParts are what every name secretName accepts holds, in any
// case: each word it looks for, glued or not, holds one.
var secretNameParts = []string{"pass", "secret", "token", "credential", "auth", "key", "pwd", "bearer"}

// mayNameSecret reports whether name holds one of secretNameParts, so that
// a name that cannot name a secret is told without splitting it into words.
func mayNameSecret(name string) bool {
	for _, p := range secretNameParts {
		if indexASCIIFold(name, 0, p) >= 0 {
			return true
		}
	}
	return false
}

// nameWords splits a name into upper-case words at "_", "-", ".", spaces
// and lower-to-upper case changes.
func nameWords(name string) []string {
	var words []string
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToUpper(name[start:end]))
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !alnumByte[c] {
			flush(i)
			start = i + 1
			continue
		}
		if i > start && c >= 'A' && c <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z' {
			flush(i)
			start = i
		}
	}
	flush(len(name))
	return words
}

// notSecretValues are values that say a setting is off or absent.
var notSecretValues = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"none": true, "null": true, "nil": true, "0": true, "1": true}

// secretValue reports whether value, given under name, can be a secret: not
// empty, not a flag or "none", not an unexpanded variable ($TOKEN,
// ${TOKEN}), and not a number (tokens=512, api_key=0) unless the name is a
// password's.
func secretValue(name, value string) bool {
	if value == "" || value[0] == '$' || len(value) <= 5 && notSecretValues[strings.ToLower(value)] {
		return false
	}
	for _, w := range nameWords(name) {
		if w == "PASSWORD" || w == "PASSWD" || w == "PASSPHRASE" || w == "PWD" {
			return true
		}
	}
	return strings.Trim(value, "0123456789.,_-+") != ""
}

// tokens finds the tokens of one well-known format.
func (f *finder) tokens(tf *tokenFormat) {
	var run *tokenRun
	for from := 0; ; {
		i := strings.Index(f.s[from:], tf.prefix)
		if i < 0 {
			return
		}
		i += from
		from = i + len(tf.prefix)
		if i > 0 && !tf.startsAfter(f.s[i-1]) && !afterEscape(f.s[:i]) {
			continue
		}
		body := i + len(tf.prefix)
		if !run.covers(body) {
			e := body
			for e < len(f.s) && tf.class[f.s[e]] {
				e++
			}
			run = newTokenRun(tf, body, f.s[body:e])
		}
		if end, ok := tf.token(run, i, f.s[i:min(len(f.s), i+tokenHead)]); ok {
			f.add("", f.s[i:end], i, tf.format)
			from = max(from, end)
		}
	}
}

// bearerByte may be part of a bearer token (RFC 6750's b64token).
var bearerByte = byteClass(func(c byte) bool { return tokenByte[c] || strings.IndexByte("._~+/=", c) >= 0 })

// bearers finds "Bearer TOKEN" (any case) with a token of 12 bytes or more.
func (f *finder) bearers() {
	const word = "bearer"
	for from := 0; ; {
		i := indexASCIIFold(f.s, from, word)
		if i < 0 {
			return
		}
		from = i + len(word)
		if i > 0 && alnumByte[f.s[i-1]] {
			continue
		}
		j := from
		for j < len(f.s) && (f.s[j] == ' ' || f.s[j] == '\t') {
			j++
		}
		if j == from {
			continue
		}
		end := j
		for end < len(f.s) && bearerByte[f.s[end]] {
			end++
		}
		if end-j >= 12 {
			f.add("", f.s[j:end], j, FormatBearer)
			from = end
		}
	}
}

// indexASCIIFold returns the offset of the first word (lower-case ASCII)
// in s at or after from, in any case, or -1. Unlike searching
// strings.ToLower(s), it keeps the offsets of s whatever else s holds.
func indexASCIIFold(s string, from int, word string) int {
	for i := from; i+len(word) <= len(s); i++ {
		if s[i]|0x20 == word[0] && strings.EqualFold(s[i:i+len(word)], word) {
			return i
		}
	}
	return -1
}

// awsSecretByte may be part of an AWS secret access key.
var awsSecretByte = byteClass(func(c byte) bool { return alnumByte[c] || c == '/' || c == '+' })

// awsSecrets finds, in a string that holds an AWS access key id, the
// 40-character secret access keys: runs of exactly 40 base64 characters
// mixing upper and lower case with digits or "/" and "+" (a 40-digit hex
// hash beside a key id is not one).
func (f *finder) awsSecrets() {
	has := false
	for _, o := range f.done {
		has = has || o.Format == FormatAWSKeyID
	}
	if !has {
		return
	}
	s := f.s
	for i := 0; i < len(s); {
		if !awsSecretByte[s[i]] {
			i++
			continue
		}
		j := i
		for j < len(s) && awsSecretByte[s[j]] {
			j++
		}
		if j-i == 40 && (j == len(s) || s[j] != '=') && mixedCase(s[i:j]) {
			f.add("", s[i:j], i, FormatAWSSecret)
		}
		i = j
	}
}

// mixedCase reports whether v holds upper and lower case letters and a
// digit, "/" or "+".
func mixedCase(v string) bool {
	var up, low, other bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		up = up || c >= 'A' && c <= 'Z'
		low = low || c >= 'a' && c <= 'z'
		other = other || c >= '0' && c <= '9' || c == '/' || c == '+'
	}
	return up && low && other
}

// Mask hides a value whole: none of its own characters shows, only "…"
// and its length in characters, e.g. "…(14 chars)". A token that starts
// with a well-known format's prefix keeps that prefix, which names the
// format and not the secret: "ghp_…(40 chars)". An empty value is
// "(empty)".
func Mask(value string) string {
	n := utf8.RuneCountInString(value)
	if n == 0 {
		return "(empty)"
	}
	return formatPrefix(value) + lengthMark(n)
}

// Abbrev shows enough of a value that exposes its machine or its user but
// is no credential (an environment variable's value, a working folder) to
// recognise it, and never all of it: at most the first 3 characters (fewer
// for short values: a quarter of them), "…", and the length in characters,
// e.g. "/ho…(18 chars)". An empty value is "(empty)". A credential's value
// gets Mask.
func Abbrev(value string) string {
	n := utf8.RuneCountInString(value)
	if n == 0 {
		return "(empty)"
	}
	show := min(3, n/4)
	var b strings.Builder
	for _, r := range value {
		if show == 0 {
			break
		}
		if r < 0x20 || r == 0x7f {
			r = '?'
		}
		b.WriteRune(r)
		show--
	}
	b.WriteString(lengthMark(n))
	return b.String()
}

// maskFor masks a finding's value as its kind asks: a credential whole
// (Mask), anything else abbreviated (Abbrev).
func maskFor(k Kind, value string) string {
	if k == KindSecret || k == KindCommand {
		return Mask(value)
	}
	return Abbrev(value)
}

// lengthMark is "…(n chars)", the part of a mask that says how long the
// value was.
func lengthMark(n int) string {
	if n == 1 {
		return "…(1 char)"
	}
	return "…(" + strconv.Itoa(n) + " chars)"
}

// formatPrefix is the prefix of a well-known token format (tokenFormats)
// value starts with and goes on past, "" for any other value: a Slack
// token keeps its "xox?-", every other format its literal prefix.
func formatPrefix(value string) string {
	for _, f := range tokenFormats {
		p := f.prefix
		if !strings.HasPrefix(value, p) {
			continue
		}
		if f.format == FormatSlack {
			if len(value) < 5 || !alnumByte[value[3]] || value[4] != '-' {
				continue
			}
			p = value[:5]
		}
		if len(value) > len(p) {
			return p
		}
	}
	return ""
}

// MaskURL masks only the password of every scheme://user:password@host in
// s, keeping the rest readable: "https://bob:…(9 chars)@example.com".
// Callers still must not print s unmasked elsewhere.
func MaskURL(s string) string {
	creds := URLCredentials(s)
	for i := len(creds) - 1; i >= 0; i-- {
		c := creds[i]
		head := c.URL[:len(c.URL)-len(c.Host)-len(c.Password)-len(c.User)-2] // scheme:// as written
		masked := head + c.User + ":" + Mask(c.Password) + "@" + c.Host
		s = s[:c.Offset] + masked + s[c.Offset+len(c.URL):]
	}
	return s
}

// MaskSecrets returns s with every secret FindSecrets finds replaced by its
// mask (Mask; a URL keeps its scheme, user and host: MaskURL). Everything
// nsyscheck prints that a capture or a user's file supplied goes through it.
//
// A secret can hide another (a NAME=VALUE in a URL's host): masking repeats
// until nothing is left to mask, so that masking twice changes nothing.
func MaskSecrets(s string) string {
	for round := 0; round < 8; round++ {
		secrets := FindSecrets(s)
		if len(secrets) == 0 {
			break
		}
		var b strings.Builder
		b.Grow(len(s))
		at := 0
		for _, sec := range secrets {
			b.WriteString(s[at:sec.Offset])
			if sec.Format == FormatURL {
				b.WriteString(MaskURL(sec.Value))
			} else {
				b.WriteString(Mask(sec.Value))
			}
			at = sec.Offset + len(sec.Value)
		}
		b.WriteString(s[at:])
		s = b.String()
	}
	return s
}
