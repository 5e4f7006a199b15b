package redact

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// A pattern finds one secret in text whatever spelling each of its characters
// takes on the wire, and in any mix of them within one occurrence:
//
//	raw            a-b c/d&
//	JSON escapes   \u0061 or \u0041-style escapes of any character (either hex
//	               case, surrogate pairs above U+FFFF), \/ \" \\ \n \t \r \b \f
//	percent        %2D %2d of any byte, + or %20 for a space
//
// Rather than listing spellings (there are exponentially many), a pattern is
// a small automaton over the secret's characters: at each character it tries
// the raw bytes, a percent-encoded byte and a JSON escape. A JSON escape whose
// backslash is itself percent-encoded, HTML entities and other encodings are
// not recognised (README, "What is redacted").
type pattern struct {
	secret string
	units  []unit
	starts []byte // the bytes an occurrence can begin with
	// maxLen is the longest spelling: 12 bytes per character at most (a
	// surrogate pair, or four percent-encoded bytes).
	maxLen int
}

// unit is one character of a secret: a rune and its UTF-8 bytes, or one byte
// of invalid UTF-8 (r < 0), which has no JSON escape.
type unit struct {
	r rune
	b []byte
}

func newPattern(secret string) *pattern {
	p := &pattern{secret: secret}
	for i := 0; i < len(secret); {
		r, n := utf8.DecodeRuneInString(secret[i:])
		if r == utf8.RuneError && n <= 1 {
			r = -1
		}
		p.units = append(p.units, unit{r: r, b: []byte(secret[i : i+n])})
		i += n
	}
	first := p.units[0]
	p.starts = []byte{first.b[0], '%'}
	if first.r >= 0 {
		p.starts = append(p.starts, '\\')
	}
	if first.b[0] == ' ' {
		p.starts = append(p.starts, '+')
	}
	p.maxLen = 12 * len(p.units)
	return p
}

type matchState uint8

const (
	noMatch matchState = iota
	partialMatch
	fullMatch
)

// match reports whether an occurrence of p begins at b[i]: fullMatch with its
// end, or partialMatch if b ends while the occurrence could still go on.
func (p *pattern) match(b []byte, i int) (end int, st matchState) {
	return p.matchFrom(b, i, 0)
}

func (p *pattern) matchFrom(b []byte, j, k int) (int, matchState) {
	if k == len(p.units) {
		return j, fullMatch
	}
	best, st := -1, noMatch
	p.unitEnds(b, j, &p.units[k], func(e int, partial bool) {
		if partial {
			st = max(st, partialMatch)
			return
		}
		if end, s := p.matchFrom(b, e, k+1); s == fullMatch {
			if st != fullMatch || end > best {
				best = end
			}
			st = fullMatch
		} else {
			st = max(st, s)
		}
	})
	return best, st
}

// unitEnds calls fn with every position at which one spelling of u starting
// at b[j] ends, or with partial set if b ends inside a spelling that could
// still be u.
func (p *pattern) unitEnds(b []byte, j int, u *unit, fn func(end int, partial bool)) {
	if j >= len(b) {
		fn(j, true)
		return
	}
	bytesEnds(b, j, u.b, fn)
	if u.r >= 0 && b[j] == '\\' {
		escapeEnd(b, j, u.r, fn)
	}
}

// bytesEnds matches the bytes of one character, each raw or percent-encoded
// (a space also as +).
func bytesEnds(b []byte, j int, want []byte, fn func(end int, partial bool)) {
	if len(want) == 0 {
		fn(j, false)
		return
	}
	if j >= len(b) {
		fn(j, true)
		return
	}
	c := want[0]
	if b[j] == c || (c == ' ' && b[j] == '+') {
		bytesEnds(b, j+1, want[1:], fn)
	}
	if b[j] == '%' {
		switch {
		case j+2 < len(b):
			if isHex(b[j+1]) && isHex(b[j+2]) && unhex(b[j+1])<<4|unhex(b[j+2]) == c {
				bytesEnds(b, j+3, want[1:], fn)
			}
		case j+1 == len(b) || isHex(b[j+1]) && unhex(b[j+1]) == c>>4:
			fn(len(b), true)
		}
	}
}

// oracleShort maps the characters JSON may escape with two bytes to the second.
var oracleShort = map[rune]byte{'"': '"', '\\': '\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// escapeEnd matches a JSON escape of r at b[j] (a backslash).
func escapeEnd(b []byte, j int, r rune, fn func(end int, partial bool)) {
	if j+1 >= len(b) {
		fn(len(b), true)
		return
	}
	if s, ok := oracleShort[r]; ok && b[j+1] == s {
		fn(j+2, false)
	}
	if b[j+1] != 'u' {
		return
	}
	var want []rune
	if r >= 0x10000 {
		r1, r2 := utf16Pair(r)
		want = []rune{r1, r2}
	} else {
		want = []rune{r}
	}
	p := j
	for _, w := range want {
		if p+6 > len(b) {
			// b ends inside the escape: partial if what is there agrees.
			if hexPrefixAgrees(b[p:], w) {
				fn(len(b), true)
			}
			return
		}
		if b[p] != '\\' || b[p+1] != 'u' || !allHex(b[p+2:p+6]) || hexValue(b[p+2:p+6]) != w {
			return
		}
		p += 6
	}
	fn(p, false)
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// hexPrefixAgrees reports whether b (shorter than 6 bytes) is the start of
// the escape \uXXXX of w.
func hexPrefixAgrees(b []byte, w rune) bool {
	const lit = `\u`
	for i, c := range b {
		switch {
		case i < 2:
			if c != lit[i] {
				return false
			}
		case !isHex(c) || rune(unhex(c)) != (w>>(4*(5-i)))&0xf:
			return false
		}
	}
	return true
}

// oracleSet is the matcher redact used before its multi-pattern one: one
// automaton per secret, tried at every byte an occurrence of it may start
// with. It is kept as the reference the matcher is fuzzed against.
type oracleSet struct {
	pats   []*pattern
	starts []startPatterns
}

func newOracleSet(secrets []string) *oracleSet {
	s := &oracleSet{}
	for _, v := range secrets {
		s.pats = append(s.pats, newPattern(v))
	}
	s.starts = buildStarts(s.pats)
	return s
}

// find returns the occurrences of every pattern in b, sorted and merged where
// they overlap, and the start of the earliest occurrence cut off by the end
// of b (len(b) if none).
func (s *oracleSet) find(b []byte) (spans []span, partial int) {
	partial = len(b)
	for _, st := range s.starts {
		for off := 0; off < len(b); {
			i := bytes.IndexByte(b[off:], st.b)
			if i < 0 {
				break
			}
			i += off
			off = i + 1
			for _, p := range st.pats {
				end, m := p.match(b, i)
				switch m {
				case fullMatch:
					spans = append(spans, span{i - escapeBefore(b, i), end})
				case partialMatch:
					partial = min(partial, i-escapeBefore(b, i))
				}
			}
		}
	}
	if len(spans) > 1 {
		slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
		out := spans[:1]
		for _, sp := range spans[1:] {
			last := &out[len(out)-1]
			if sp.start < last.end {
				last.end = max(last.end, sp.end)
				continue
			}
			out = append(out, sp)
		}
		spans = out
	}
	return spans, partial
}

// startPatterns lists the patterns an occurrence beginning with byte b may be.
type startPatterns struct {
	b    byte
	pats []*pattern
}

func buildStarts(pats []*pattern) []startPatterns {
	var out []startPatterns
	for _, p := range pats {
		for _, c := range p.starts {
			i := slices.IndexFunc(out, func(s startPatterns) bool { return s.b == c })
			if i < 0 {
				out = append(out, startPatterns{b: c})
				i = len(out) - 1
			}
			out[i].pats = append(out[i].pats, p)
		}
	}
	return out
}
