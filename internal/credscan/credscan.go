// Package credscan finds strings that look like credentials in text: keys
// in known formats (OpenAI, Anthropic, GitHub, AWS, Slack, Google, JWTs,
// private keys), values assigned to credential names (`*_API_KEY=`,
// `"password": ...`, `Authorization: Bearer ...`) and long high-entropy
// tokens. It is what `wireproof scan` runs on a bundle and its derived files
// before they are attached to an issue, and what verify runs on a kept
// working-tree patch. The "[REDACTED]" placeholder never counts.
//
// A finding is a guess, not a proof: what it reports is worth a look, and
// what it misses may still be a secret.
package credscan

import (
	"bytes"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wireproof/wireproof/internal/rare"
)

// Redacted is the placeholder the recorder writes for a secret; a value that
// is (or holds) it is not a credential.
const Redacted = "[REDACTED]"

// Finding is one credential-looking string in a text.
type Finding struct {
	Kind  string // what it looks like: "openai-key", "jwt", "named-secret", "high-entropy", ...
	Start int    // its bytes are text[Start:End]
	End   int
}

// rules are the known formats, each a pattern whose group 1 (or the whole
// match) is the secret.
var rules = []struct {
	kind    string
	anchors []rare.Word // lower-case literals every match holds: the pattern runs only near one
	window  int         // how far after an anchor a match may end
	re      *regexp.Regexp
}{
	{"private-key", words("private key-----"), 64, regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
	{"anthropic-key", words("sk-ant-"), 512, regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{16,}`)},
	{"openai-key", words("sk-"), 512, regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},
	{"github-token", words("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), 512, regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{"aws-access-key", words("akia", "asia"), 64, regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)},
	{"slack-token", words("xox"), 512, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"google-api-key", words("aiza"), 64, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{"jwt", words("eyj"), 8192, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	// A bearer credential: Authorization: Bearer X, "Bearer X" in a header
	// list, a Basic credential.
	{"bearer", words("bearer", "basic"), 1024, regexp.MustCompile(`(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})`)},
}

// namedAnchors are the words of the credential names: a value assigned to
// one (OPENAI_API_KEY=..., "apiKey": "...", password: ..., client_secret=...,
// --token VALUE) is a named secret (see named).
var namedAnchors = words("key", "secret", "passw", "token", "credential")

// words returns the anchors, each searched for from its rarest letter
// (internal/rare): a 64 MiB message is searched for some twenty of them.
func words(ws ...string) []rare.Word {
	out := make([]rare.Word, len(ws))
	for i, w := range ws {
		out[i] = rare.New(w)
	}
	return out
}

// nameReach is how far before its anchor a credential name may begin.
const nameReach = 96

// notSecret are values that stand where a credential could and are none:
// wireproof's own verification nonce (RESULT_ and a UUID: the checks need it
// in the bundle), and what a name like token_type is given.
var notSecret = regexp.MustCompile(`^(?:RESULT_[0-9a-f-]{36}|urn[:%].*)$`)

// typeName is a credential name that names a type, not a value
// (token_type, requested_token_type, secretKind).
var typeName = regexp.MustCompile(`(?i)(?:type|kind|fields?|names?)$`)

// High-entropy tokens: a run of token characters this long or longer (and
// at most maxEntropyLen: longer runs are base64 payloads, not keys) whose
// Shannon entropy per character reaches minEntropy. Hex (at most 4 bits per
// character: digests, UUIDs without dashes) stays below it.
const (
	minEntropyLen = 32 // a WebSocket key (24) is a nonce, not a credential
	maxEntropyLen = 120
	minEntropy    = 4.3
)

// Find returns the credential-looking strings of text, in order, none
// overlapping (the first rule's wins where two cover the same bytes). Its
// time is linear in the text: each pattern runs only in a window around a
// literal every match of it holds.
func Find(text []byte) []Finding {
	var out []Finding
	taken := func(s, e int) bool {
		for _, f := range out {
			if s < f.End && f.Start < e {
				return true
			}
		}
		return false
	}
	add := func(kind string, s, e int) {
		if e-s < 8 || taken(s, e) || isPlaceholder(text, s, e) || notSecret.Match(text[s:e]) {
			return
		}
		out = append(out, Finding{Kind: kind, Start: s, End: e})
	}
	lower := asciiLower(text) // same length as text: indexes carry over
	for _, r := range rules {
		for _, w := range windows(lower, r.anchors, r.window) {
			for _, m := range r.re.FindAllSubmatchIndex(text[w[0]:w[1]], -1) {
				for i := range m {
					if m[i] >= 0 {
						m[i] += w[0]
					}
				}
				s, e := m[0], m[1]
				if n := len(m); n > 2 && m[n-2] >= 0 {
					s, e = m[n-2], m[n-1] // the last group: the value
				}
				add(r.kind, s, e)
			}
		}
	}
	for _, a := range namedAnchors {
		for from := 0; ; {
			i := a.Index(lower[from:])
			if i < 0 {
				break
			}
			i += from
			from = i + len(a.String())
			if s, e, ok := named(text, i, len(a.String())); ok {
				add("named-secret", s, e)
			}
		}
	}
	for i := 0; i < len(text); {
		if !isTokenByte(text[i]) {
			i++
			continue
		}
		if i > 0 && text[i-1] == '\\' && isEscapeLetter(text[i]) {
			// The letter of a JSON escape (the n of \n in "Output:\nRESULT_..."
			// of a string inside a string) is not the token's first byte.
			i++
			continue
		}
		j := i
		for j < len(text) && isTokenByte(text[j]) {
			j++
		}
		if n := j - i; n >= minEntropyLen && n <= maxEntropyLen && mixed(text[i:j]) && bytes.Count(text[i:j], []byte("/")) < 2 && !identifierLike(text[i:j]) && !notSecret.Match(text[i:j]) && entropy(text[i:j]) >= minEntropy {
			add("high-entropy", i, j)
		}
		i = j
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// named reads the credential name around the anchor at text[i:i+n] and
// the value assigned to it: NAME=VALUE, NAME: VALUE, "NAME": "VALUE" (JSON
// escapes allowed) or a flag, --NAME VALUE. It returns the value's bytes.
func named(text []byte, i, n int) (int, int, bool) {
	ns, ne := i, i+n
	for ns > 0 && i-ns < nameReach && isNameByte(text[ns-1]) {
		ns--
	}
	for ne < len(text) && ne-i < nameReach && isNameByte(text[ne]) {
		ne++
	}
	name := text[ns:ne]
	if typeName.Match(name) || !nameWord.Match(name) {
		return 0, 0, false
	}
	p := ne
	skip := func(set string) {
		for p < len(text) && strings.IndexByte(set, text[p]) >= 0 {
			p++
		}
	}
	skip(`\"'`)
	skip(" \t")
	switch {
	case p < len(text) && (text[p] == '=' || text[p] == ':'):
		p++
		skip(" \t")
		skip(`\"'`)
	case text[ns] == '-' && p > ne && (ns == 0 || text[ns-1] == ' ' || text[ns-1] == '\t') && p < len(text) && text[p] != '-':
		// a flag: --NAME VALUE
		skip(`"'`)
	default:
		return 0, 0, false
	}
	vs := p
	for p < len(text) && p-vs < 1024 && strings.IndexByte(" \t\r\n\"'\\&,;<>[]{}", text[p]) < 0 {
		p++
	}
	if p-vs < 8 || !plausibleValue(text[vs:p]) {
		return 0, 0, false
	}
	return vs, p, true
}

// nameWord is a credential name: it holds one of the words whole enough
// (api_key, secret, password, token, credential, private_key, access_key).
var nameWord = regexp.MustCompile(`(?i)(?:api[_-]?key|secret|passw(?:or)?d|token|credential|private[_-]?key|access[_-]?key)`)

// envName is the name of an environment variable in capitals, without
// digits: the Claude CLI's "apiKeySource":"ANTHROPIC_API_KEY" says where a
// key came from, not what it is.
var envName = regexp.MustCompile(`^[A-Z]+(?:_[A-Z]+)+$`)

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// windows returns the stretches of text around each anchor's occurrences
// (from nameReach before it to reach after it), merged where they overlap.
func windows(lower []byte, anchors []rare.Word, reach int) [][2]int {
	var ws [][2]int
	for _, a := range anchors {
		n := len(a.String())
		for from := 0; ; {
			i := a.Index(lower[from:])
			if i < 0 {
				break
			}
			i += from
			ws = append(ws, [2]int{max(0, i-nameReach), min(len(lower), i+n+reach)})
			from = i + n
		}
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i][0] < ws[j][0] })
	var merged [][2]int
	for _, w := range ws {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

// asciiLower returns b with its ASCII letters in lower case (and every
// other byte as it is, so offsets match b's).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// isTokenByte reports whether c is a character tokens are made of. '=' is
// not (it ends a name in name=value; base64's padding is left off), and a
// run with two '/' or more is a path, not a token.
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '/' || c == '-'
}

// isPlaceholder reports whether text[s:e] holds the "[REDACTED]"
// placeholder (or its word).
func isPlaceholder(text []byte, s, e int) bool {
	return bytes.Contains(text[s:e], []byte("REDACTED"))
}

// plausibleValue rules out what a credential name is often followed by
// without holding one: words, paths and URLs without digits, a name of a
// field, a boolean, a type.
func plausibleValue(v []byte) bool {
	s := string(v)
	if strings.ContainsAny(s, "/") && !strings.ContainsAny(s, "0123456789") {
		return false
	}
	if envName.MatchString(s) {
		return false
	}
	letters, digits, other := 0, 0, 0
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters++
		case c >= '0' && c <= '9':
			digits++
		default:
			other++
		}
	}
	// A credential has digits or symbols beside letters; a lone word
	// ("password: required", "token=string") has none.
	return digits > 0 && letters > 0 || (digits+other > 0 && letters > 0 && entropy(v) >= 3.5)
}

// mixed reports whether b has letters of both cases and digits: a token,
// not a word, a number or a hex digest.
func mixed(b []byte) bool {
	var lower, upper, digit bool
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return lower && upper && digit
}

// identifierLike reports whether b reads as a name made of words, such as
// a migration's "39_ProjectionProjectsDefaultThreadEnvMode" or
// "45_OrchestrationV2ThreadLaunchWorkflows": at most four digits in at
// most two runs, and every run of letters, split where a lower-case letter
// meets an upper-case one, a word of three letters or more (an acronym, or
// letters holding a vowel) or a version's letter before its digits ("V2"). A random token's letters fall into short pieces ("Zm", "vY").
func identifierLike(b []byte) bool {
	digits, digitRuns := 0, 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			digitRuns++
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				digits++
				i++
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(b) && (b[j] >= 'a' && b[j] <= 'z' || b[j] >= 'A' && b[j] <= 'Z') &&
				!(b[j] >= 'A' && b[j] <= 'Z' && b[j-1] >= 'a' && b[j-1] <= 'z') {
				j++
			}
			if !word(b[i:j]) && !(j-i <= 2 && j < len(b) && b[j] >= '0' && b[j] <= '9') {
				return false // a short piece is a word only as a version ("V2")
			}
			i = j
		default:
			i++
		}
	}
	return digits <= 4 && digitRuns <= 2
}

// word reports whether w (letters only) is a word of identifierLike's: three
// letters or more, all upper case or holding a vowel.
func word(w []byte) bool {
	if len(w) < 3 {
		return false
	}
	upper, vowel := true, false
	for _, c := range w {
		if c >= 'a' && c <= 'z' {
			upper = false
		}
		if strings.IndexByte("aeiouyAEIOUY", c) >= 0 {
			vowel = true
		}
	}
	return upper || vowel
}

// isEscapeLetter reports whether c, after a backslash, is a JSON escape's
// letter.
func isEscapeLetter(c byte) bool {
	switch c {
	case 'n', 'r', 't', 'b', 'f', 'u':
		return true
	}
	return false
}

// entropy is the Shannon entropy of b in bits per byte.
func entropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	h := 0.0
	n := float64(len(b))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// Mask returns s with all but its first four bytes (at most a quarter of
// it) replaced by '*', and its length: enough to recognise a finding, never
// the secret.
func Mask(s string) string {
	keep := min(4, len(s)/4)
	return s[:keep] + strings.Repeat("*", min(len(s)-keep, 12)) + "(" + strconv.Itoa(len(s)) + " bytes)"
}

// Excerpt returns the finding f of text with up to context bytes of text on
// each side, every finding in that stretch masked (Mask), on one line.
func Excerpt(text []byte, all []Finding, f Finding, context int) string {
	from, to := max(0, f.Start-context), min(len(text), f.End+context)
	var b strings.Builder
	at := from
	for _, g := range all {
		if g.End <= from || g.Start >= to {
			continue
		}
		s, e := max(g.Start, from), min(g.End, to)
		if s < at {
			continue
		}
		b.Write(text[at:s])
		b.WriteString(Mask(string(text[g.Start:g.End])))
		at = e
	}
	if at < to {
		b.Write(text[at:to])
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, b.String())
}

// Redact returns text with every finding replaced by "[REDACTED]".
func Redact(text []byte) []byte {
	fs := Find(text)
	if len(fs) == 0 {
		return text
	}
	out := make([]byte, 0, len(text))
	at := 0
	for _, f := range fs {
		out = append(out, text[at:f.Start]...)
		out = append(out, Redacted...)
		at = f.End
	}
	return append(out, text[at:]...)
}
