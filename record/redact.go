package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
)

// Redacted replaces every secret in a recording.
const Redacted = "[REDACTED]"

// DefaultTokenFields are the query parameters, form fields and JSON fields
// whose values are credentials in any OAuth-style protocol: the token fields a
// Recorder knows when Options.TokenFields is nil. A protocol with names of its
// own supplies them (verify supplies t3.TokenFields).
var DefaultTokenFields = []string{"access_token", "refresh_token", "id_token", "subject_token", "token"}

// fieldSet is the set of token field names of a recording. Names match whole
// identifiers, case-insensitively, so "token_type" or "subject_token_type" are
// not taken for "token".
type fieldSet struct {
	names []string
	// anchors are bytes, in both cases, such that every name contains one:
	// the field scan looks only around them. The rarest letter of each name
	// is chosen ('k' for every default name): 'k' is rare in JSON and prose,
	// so the scan is one vectorised IndexByte pass per anchor for most
	// payloads (anchoring on "oken" would stop at every 'o').
	anchors []byte
	// after[i] lists, lowercased, the two bytes that follow anchors[i] in
	// the names that contain it (0 past a name's end): an anchor followed by
	// anything else starts no name, and the scan moves on without reading
	// the word around it ("task" or "background" in a JSON payload).
	after [][][2]byte
}

// anchorRarity orders the letters from rarest to commonest in English text
// and JSON keys; an anchor is the first of them a name contains.
const anchorRarity = "qjzxkvbwyfgpmhucdlsnroitae"

// newFieldSet returns the set of names (DefaultTokenFields if names is nil).
// Empty names are ignored; a name must be an identifier (letters, digits, _
// and -) to be found.
func newFieldSet(names []string) *fieldSet {
	if names == nil {
		names = DefaultTokenFields
	}
	fs := &fieldSet{}
	for _, n := range names {
		if n == "" || slices.ContainsFunc(fs.names, func(m string) bool { return strings.EqualFold(m, n) }) {
			continue
		}
		fs.names = append(fs.names, n)
		if fs.anchorIn([]byte(n)) >= 0 {
			continue
		}
		a := n[0]
		if i := strings.IndexFunc(anchorRarity, func(r rune) bool { return strings.ContainsRune(strings.ToLower(n), r) }); i >= 0 {
			a = anchorRarity[i]
		}
		fs.anchors = append(fs.anchors, lower(a))
		if up := upper(a); up != lower(a) {
			fs.anchors = append(fs.anchors, up)
		}
	}
	fs.after = make([][][2]byte, len(fs.anchors))
	for i, a := range fs.anchors {
		for _, n := range fs.names {
			for p := range len(n) {
				if lower(n[p]) == lower(a) {
					if f := followers([]byte(n), p); !slices.Contains(fs.after[i], f) {
						fs.after[i] = append(fs.after[i], f)
					}
				}
			}
		}
	}
	return fs
}

// followers returns the two bytes after w[p] that are part of the word,
// lowercased, 0 for none.
func followers(w []byte, p int) [2]byte {
	var f [2]byte
	for j := range f {
		if q := p + 1 + j; q < len(w) && isIdent(w[q]) {
			f[j] = lower(w[q])
		} else {
			break
		}
	}
	return f
}

// anchorIn returns the index in fs.anchors of the first anchor w contains, or
// -1.
func (fs *fieldSet) anchorIn(w []byte) int {
	for i, a := range fs.anchors {
		if bytes.IndexByte(w, a) >= 0 {
			return i
		}
	}
	return -1
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// minLearned is the shortest value learned from a token field or a credential
// header as a secret. Shorter values are still replaced where they stand, but
// replacing them everywhere would shred unrelated text ("1", "true").
const minLearned = 6

// secretSet is an immutable snapshot of the secrets: one pattern per secret,
// each finding it in every spelling it may take on the wire (see pattern).
type secretSet struct {
	pats   []*pattern
	starts []startPatterns
	maxLen int // the longest spelling of any secret, which bounds a stream's hold-back
}

// redactor holds the secrets of a recording. Lookups take an atomic snapshot;
// adding a secret copies the set, which happens a handful of times per run.
type redactor struct {
	fields *fieldSet // never changes

	mu    sync.Mutex
	known map[string]bool
	set   atomic.Pointer[secretSet]
}

// newRedactor returns a redactor of secrets that learns the values of the
// token fields named (DefaultTokenFields if nil).
func newRedactor(secrets, tokenFields []string) *redactor {
	r := &redactor{fields: newFieldSet(tokenFields), known: map[string]bool{}}
	r.set.Store(&secretSet{})
	for _, s := range secrets {
		r.add(s, false)
	}
	return r
}

func (r *redactor) load() *secretSet { return r.set.Load() }

// add adds secret s (learned: found in a token field, so subject to
// minLearned). A secret given by the user also gets its base64 spellings. It
// reports whether the set changed.
func (r *redactor) add(s string, learned bool) bool {
	if s == "" || strings.Contains(s, Redacted) || (learned && len(s) < minLearned) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known[s] {
		return false
	}
	r.known[s] = true
	old := r.set.Load()
	pats := slices.Clone(old.pats)
	news := []string{s}
	if !learned {
		news = append(news, spelling.Base64Stable(s)...)
	}
	for _, v := range news {
		if !slices.ContainsFunc(pats, func(p *pattern) bool { return p.secret == v }) {
			pats = append(pats, newPattern(v))
		}
	}
	set := &secretSet{pats: pats, starts: buildStarts(pats)}
	for _, p := range pats {
		set.maxLen = max(set.maxLen, p.maxLen)
	}
	r.set.Store(set)
	return true
}

// RedactText returns s with every one of secrets, and every value of a token
// field, replaced by "[REDACTED]". It is for text that never passes through a
// Recorder, such as the command line written into a bundle's header.
//
// The password of a URL's userinfo (scheme://user:password@host) is
// replaced too, and redacted wherever else it occurs in s.
func RedactText(s string, secrets []string) string {
	return RedactTextWith(s, &Options{Redact: secrets})
}

// RedactTextWith is RedactText with the secrets (Redact) and token fields
// (TokenFields) of o, as a Recorder made with o redacts them; the other
// options do not apply. A nil o means the defaults.
func RedactTextWith(s string, o *Options) string {
	if o == nil {
		o = &Options{}
	}
	r := newRedactor(o.Redact, o.TokenFields)
	for _, m := range userinfoPassword.FindAllStringSubmatch(s, -1) {
		if p, err := url.PathUnescape(m[2]); err == nil {
			r.add(p, true)
		}
		r.add(m[2], true)
	}
	s = userinfoPassword.ReplaceAllString(s, "${1}"+Redacted+"@")
	r.learn([]byte(s))
	return string(r.text([]byte(s), r.load()))
}

// userinfoPassword matches the password of a URL's userinfo.
var userinfoPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)([^/\s@]+)@`)

// URLPassword returns the password of u's userinfo, or "".
func URLPassword(u *url.URL) string {
	if u == nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// event redacts every textual field of ev in place. It never writes into the
// bytes or header maps ev points to: changed values are new allocations, so a
// caller may go on relaying the original bytes.
func (r *redactor) event(ev *bundle.Event, set *secretSet) {
	learned := false
	for k, vs := range ev.Header {
		if isCredentialHeader(k) {
			for _, v := range vs {
				for _, s := range credentialValues(k, v) {
					learned = r.add(s, true) || learned
				}
			}
		}
		for _, v := range vs {
			learned = r.learn([]byte(v)) || learned
		}
	}
	learned = r.learn([]byte(ev.URL)) || learned
	// A body may be 64 MiB: it is searched for field names once.
	bodyHint := r.fields.hint(ev.Body.Data)
	if bodyHint {
		learned = r.learnFields(ev.Body.Data) || learned
	}
	if learned {
		set = r.load()
	}

	if ev.Header != nil {
		ev.Header = r.header(ev.Header, set)
	}
	ev.URL = r.str(ev.URL, set)
	ev.Reason = r.str(ev.Reason, set)
	ev.Err = r.str(ev.Err, set)
	ev.Name = r.str(ev.Name, set)
	if ev.Body.Data != nil {
		ev.Body.Data = r.textHinted(ev.Body.Data, set, bodyHint)
	}
	if ev.Attrs != nil {
		ev.Attrs = r.text(ev.Attrs, set)
	}
}

func (r *redactor) str(s string, set *secretSet) string {
	if s == "" {
		return s
	}
	b := r.text([]byte(s), set)
	if len(b) == len(s) && string(b) == s {
		return s
	}
	return string(b)
}

// header returns h with credential headers masked and secrets replaced,
// cloning h only if something changes.
func (r *redactor) header(h http.Header, set *secretSet) http.Header {
	var out http.Header
	for k, vs := range h {
		for i, v := range vs {
			nv := v
			if isCredentialHeader(k) {
				nv = maskCredential(k, v)
			}
			nv = r.str(nv, set)
			if nv == v {
				continue
			}
			if out == nil {
				out = h.Clone()
			}
			out[k][i] = nv
		}
	}
	if out == nil {
		return h
	}
	return out
}

func isCredentialHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie":
		return true
	}
	return false
}

// credentialValues returns the secret parts of a credential header value: the
// credentials after the scheme, or every cookie value.
func credentialValues(k, v string) []string {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization":
		if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			cred = strings.TrimSpace(cred)
			out := []string{cred}
			// Basic credentials are base64 of user:password: the password
			// (and the pair) are secrets wherever they show up decoded.
			if strings.EqualFold(scheme, "Basic") {
				if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
					out = append(out, string(dec))
					if _, pass, ok := strings.Cut(string(dec), ":"); ok {
						out = append(out, pass)
					}
				}
			}
			return out
		}
		return []string{strings.TrimSpace(v)}
	case "Set-Cookie":
		first, _, _ := strings.Cut(v, ";")
		if _, val, ok := strings.Cut(first, "="); ok {
			return []string{strings.Trim(strings.TrimSpace(val), `"`)}
		}
	case "Cookie":
		var out []string
		for _, part := range strings.Split(v, ";") {
			if _, val, ok := strings.Cut(part, "="); ok {
				out = append(out, strings.Trim(strings.TrimSpace(val), `"`))
			}
		}
		return out
	}
	return nil
}

// maskCredential keeps the shape of a credential header (the auth scheme, the
// cookie names and attributes) and replaces the secret parts.
func maskCredential(k, v string) string {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization":
		if scheme, _, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			return scheme + " " + Redacted
		}
		return Redacted
	case "Set-Cookie":
		first, rest, hasRest := strings.Cut(v, ";")
		name, _, ok := strings.Cut(first, "=")
		if !ok {
			return Redacted
		}
		if hasRest {
			return name + "=" + Redacted + ";" + rest
		}
		return name + "=" + Redacted
	case "Cookie":
		parts := strings.Split(v, ";")
		for i, part := range parts {
			if name, _, ok := strings.Cut(part, "="); ok {
				parts[i] = name + "=" + Redacted
			} else {
				parts[i] = Redacted
			}
		}
		return strings.Join(parts, ";")
	}
	return v
}

// learn adds the value of every token field in b as a secret and reports
// whether any was new.
func (r *redactor) learn(b []byte) bool {
	return r.fields.hint(b) && r.learnFields(b)
}

// learnFields is learn for b known to hold a token field name.
func (r *redactor) learnFields(b []byte) bool {
	learned := false
	r.fields.scan(b, func(f field) {
		for _, s := range f.values(b) {
			learned = r.add(s, true) || learned
		}
	})
	return learned
}

// text returns b with token field values and secrets replaced. It returns b
// itself when nothing needs replacing (the common, allocation-free path) and a
// new slice otherwise.
func (r *redactor) text(b []byte, set *secretSet) []byte {
	return r.textHinted(b, set, r.fields.hint(b))
}

// textHinted is text for b of which hint says whether it holds a token field
// name.
func (r *redactor) textHinted(b []byte, set *secretSet, hint bool) []byte {
	out := b
	if hint {
		var fields []field
		r.fields.scan(b, func(f field) { fields = append(fields, f) })
		if len(fields) > 0 {
			out = make([]byte, 0, len(b))
			last := 0
			for _, f := range fields {
				if f.start < last {
					continue
				}
				out = append(out, b[last:f.start]...)
				out = append(out, Redacted...)
				last = f.end
			}
			out = append(out, b[last:]...)
		}
	}
	if len(set.pats) == 0 {
		return out
	}
	spans, _ := set.find(out)
	return replaceSpans(out, spans)
}

// replaceSpans returns b with every span replaced by Redacted, or b itself if
// there is none; b is never modified.
func replaceSpans(b []byte, spans []span) []byte {
	if len(spans) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for _, sp := range spans {
		out = append(out, b[last:sp.start]...)
		out = append(out, Redacted...)
		last = sp.end
	}
	return append(out, b[last:]...)
}

// escapeBefore returns how many bytes before b[i] belong to a JSON escape
// sequence the match at i starts inside ("\n" or "\u00"), so the replacement
// takes the escape with it and a JSON string stays valid.
func escapeBefore(b []byte, i int) int {
	if i >= 1 && b[i-1] == '\\' && oddBackslashes(b, i-1) {
		return 1
	}
	for k := 2; k <= 5 && k <= i; k++ {
		if b[i-k] == '\\' && b[i-k+1] == 'u' && allHex(b[i-k+2:i]) && oddBackslashes(b, i-k) {
			return k
		}
	}
	return 0
}

// oddBackslashes reports whether the backslash at b[j] escapes what follows:
// it ends an odd run of backslashes.
func oddBackslashes(b []byte, j int) bool {
	run := 0
	for ; j >= 0 && b[j] == '\\'; j-- {
		run++
	}
	return run%2 == 1
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// hint reports whether b holds a token field name.
func (fs *fieldSet) hint(b []byte) bool {
	found := false
	fs.each(b, func(int, int) bool { found = true; return false })
	return found
}

// each calls fn with the start and end of every token field name in b, in no
// particular order, until fn returns false.
func (fs *fieldSet) each(b []byte, fn func(start, end int) bool) {
	for ai, a := range fs.anchors {
		off := 0
		for {
			i := bytes.IndexByte(b[off:], a)
			if i < 0 {
				break
			}
			i += off
			if !slices.Contains(fs.after[ai], followers(b, i)) {
				// No name has this anchor followed by these bytes.
				off = i + 1
				if off >= len(b) {
					break
				}
				continue
			}
			l, e := i, i+1
			for l > 0 && isIdent(b[l-1]) {
				l--
			}
			for e < len(b) && isIdent(b[e]) {
				e++
			}
			if l > 0 && b[l-1] == '%' && l+2 < i && isHex(b[l]) && isHex(b[l+1]) {
				l += 2 // %3Ftoken: the name follows a percent-encoded byte
			}
			off = e
			// A name holding an earlier anchor was found by that anchor's pass.
			if fs.has(b[l:e]) && fs.anchorIn(b[l:e]) == ai && !fn(l, e) {
				return
			}
			if off >= len(b) {
				break
			}
		}
	}
}

// field is the value of a token field found in text: b[start:end] is replaced.
type field struct {
	start, end int
	jsonString bool // the value is the inside of a JSON string literal
	escaped    bool // ... of a JSON string literal inside another JSON string
}

// values returns the secret the field holds, in its decoded spellings.
func (f field) values(b []byte) []string {
	raw := string(b[f.start:f.end])
	out := []string{raw}
	switch {
	case f.jsonString:
		var s string
		if json.Unmarshal([]byte(`"`+raw+`"`), &s) == nil && s != raw {
			out = append(out, s)
		}
	case f.escaped:
	default:
		if s, err := url.QueryUnescape(raw); err == nil && s != raw {
			out = append(out, s)
		}
	}
	return out
}

func isIdent(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// IsTokenFieldName reports whether name can be found as a token field
// (Options.TokenFields): a non-empty identifier of letters, digits, _ and -.
func IsTokenFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := range len(name) {
		if !isIdent(name[i]) {
			return false
		}
	}
	return true
}

// has reports whether name is one of the token field names.
func (fs *fieldSet) has(name []byte) bool {
	for _, f := range fs.names {
		if len(f) == len(name) && strings.EqualFold(f, string(name)) {
			return true
		}
	}
	return false
}

// scan calls fn for the value of every token field in b, in order of
// position, in the spellings credentials travel in:
//
//	name=value          query strings, form bodies, log lines (value ends at & ; , space, quote, backslash)
//	"name": "value"     JSON (only string values; numbers and objects are left alone)
//	\"name\":\"value\"  JSON text inside a JSON string
//	name: value         unquoted text such as a log line
//
// Replacing such a value with "[REDACTED]" keeps JSON valid.
func (fs *fieldSet) scan(b []byte, fn func(field)) {
	var found []field
	fs.each(b, func(_, end int) bool {
		if f, ok := fieldValue(b, end); ok {
			found = append(found, f)
		}
		return true
	})
	slices.SortFunc(found, func(a, b field) int { return a.start - b.start })
	for _, f := range found {
		fn(f)
	}
}

// fieldValue parses what follows a token field name ending at p.
func fieldValue(b []byte, p int) (field, bool) {
	quoted, escQuoted := false, false
	switch {
	case p < len(b) && b[p] == '"':
		quoted = true
		p++
	case p+1 < len(b) && b[p] == '\\' && b[p+1] == '"':
		escQuoted = true
		p += 2
	}
	p = skipSpace(b, p)
	if !quoted && !escQuoted && isEncodedEquals(b[p:]) {
		// name%3Dvalue: a query string inside a percent-encoded URL (a
		// redirect target); the value ends at an encoded & (%26).
		start := p + 3
		q := start
		for q < len(b) && !isValueEnd(b[q]) && !isEncodedAmp(b[q:]) {
			q++
		}
		return field{start: start, end: q}, q > start && string(b[start:q]) != Redacted
	}
	if p >= len(b) || (b[p] != ':' && b[p] != '=') {
		return field{}, false
	}
	sep := b[p]
	p = skipSpace(b, p+1)
	if bytes.HasPrefix(b[p:], []byte(Redacted)) {
		return field{}, false
	}
	switch {
	case p < len(b) && b[p] == '"':
		start := p + 1
		for q := start; q < len(b); q++ {
			switch b[q] {
			case '\\':
				q++
			case '"':
				return field{start: start, end: q, jsonString: true}, q > start && string(b[start:q]) != Redacted
			}
		}
		return field{}, false
	case p+1 < len(b) && b[p] == '\\' && b[p+1] == '"':
		start := p + 2
		end := bytes.Index(b[start:], []byte(`\"`))
		if end <= 0 {
			return field{}, false
		}
		return field{start: start, end: start + end, escaped: true}, string(b[start:start+end]) != Redacted
	case sep == '=' || !(quoted || escQuoted):
		start := p
		for p < len(b) && !isValueEnd(b[p]) {
			p++
		}
		return field{start: start, end: p}, p > start && string(b[start:p]) != Redacted
	}
	return field{}, false
}

func isEncodedEquals(b []byte) bool {
	return len(b) >= 3 && b[0] == '%' && b[1] == '3' && (b[2] == 'D' || b[2] == 'd')
}

func isEncodedAmp(b []byte) bool {
	return len(b) >= 3 && b[0] == '%' && b[1] == '2' && b[2] == '6'
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t') {
		p++
	}
	return p
}

func isValueEnd(c byte) bool {
	switch c {
	case '&', ';', ',', ' ', '\t', '\r', '\n', '"', '\'', '\\', '}', ']', ')', '<', '>':
		return true
	}
	return false
}
