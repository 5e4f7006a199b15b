package redact

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/wireproof/wireproof/internal/rare"
)

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
	// first[i][c] says whether c (either case) is the first byte of one of
	// after[i] (0 for a name's end: any byte that is no identifier's): most
	// anchors are followed by no such byte, and the scan moves on with one
	// table lookup.
	first [][256]bool
}

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
		if i := strings.IndexFunc(rare.Rarity, func(r rune) bool { return strings.ContainsRune(strings.ToLower(n), r) }); i >= 0 {
			a = rare.Rarity[i]
		}
		fs.anchors = append(fs.anchors, lower(a))
		if up := upper(a); up != lower(a) {
			fs.anchors = append(fs.anchors, up)
		}
	}
	fs.after = make([][][2]byte, len(fs.anchors))
	fs.first = make([][256]bool, len(fs.anchors))
	for i, a := range fs.anchors {
		for _, n := range fs.names {
			for p := range len(n) {
				if lower(n[p]) == lower(a) {
					f := followers([]byte(n), p)
					if !slices.Contains(fs.after[i], f) {
						fs.after[i] = append(fs.after[i], f)
					}
					if f[0] == 0 {
						for c := range 256 {
							if !isIdent(byte(c)) {
								fs.first[i][c] = true
							}
						}
					} else {
						fs.first[i][f[0]], fs.first[i][upper(f[0])] = true, true
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
			if i+1 < len(b) && !fs.first[ai][b[i+1]] || !slices.Contains(fs.after[ai], followers(b, i)) {
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
