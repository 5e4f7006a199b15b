package redact

import (
	"slices"
	"sync"
	"unicode/utf8"
)

// A matcher finds every secret of a set in text, whatever spelling each of
// its characters takes on the wire and in any mix of them within one
// occurrence:
//
//	raw            a-b c/d&
//	JSON escapes   \u0061 or \u0041-style escapes of any character (either hex
//	               case, surrogate pairs above U+FFFF), \/ \" \\ \n \t \r \b \f
//	percent        %2D %2d of any byte, + or %20 for a space
//
// Rather than listing spellings (there are exponentially many per secret),
// the text is read as a lattice of tokens: at each byte, the byte itself, and
// where the byte starts one, a percent-encoded byte, a JSON escape (its UTF-8
// bytes) or a + (a space). One Aho-Corasick automaton over the secrets' bytes
// runs along every path of that lattice at once: paths fork only at %, \ and
// +, and paths that meet at the same byte in the same state are merged, so
// the cost per byte of text does not depend on the number of secrets. A
// JSON escape whose backslash is itself percent-encoded, HTML entities and
// other encodings are not recognised (docs/redaction.md).
//
// Each path remembers where in the text each of its last decoded bytes
// began (a ring as long as the longest secret), so an occurrence found at
// its end knows its start. Where two paths merge, the earlier start of each
// byte is kept: both are occurrences, and the replacement covers both.
type matcher struct {
	root  [256]int32 // the state after each byte from the root; 0: none
	edges []edgeList // per state, its transitions (the root's are in root)
	fail  []int32
	depth []int32
	// outLen is the length of the longest secret that ends at the state
	// (its own or one on its failure chain); 0 if none.
	outLen []int32
	// stubLen is the length of the longest stub that ends at the state (its
	// own or one on its failure chain); 0 if none. A stub is a secret's
	// first stubMin(len) or more characters, short of the whole secret.
	stubLen []int32
	// special marks the bytes that start a token other than themselves:
	// %, \ and, if some secret has a space, +.
	special [256]bool
	// live marks the bytes on which the root has a transition, or that are
	// special: a single path at the root skips every other byte.
	live [256]bool
	// wrap marks the states inside a base64 spelling, where a line break
	// (CR or LF, in any spelling) is skipped: base64 is wrapped every 76
	// characters by MIME and the base64 tool, 64 by PEM.
	wrap     []bool
	fold     bool // ASCII letters match in either case (secrets are in lower case)
	ringSize int  // a power of two, at least the longest secret
	pool     sync.Pool
}

type edgeList struct {
	b  []byte
	to []int32
}

func (e *edgeList) get(c byte) int32 {
	for i, x := range e.b {
		if x == c {
			return e.to[i]
		}
	}
	return -1
}

// newMatcher returns the matcher of secrets; wrapped[i] says that secrets[i]
// is base64 that may be wrapped (nil: none is).
func newMatcher(secrets []string, wrapped []bool) *matcher {
	m := &matcher{edges: []edgeList{{}}, fail: []int32{0}, depth: []int32{0}, outLen: []int32{0}, stubLen: []int32{0}, wrap: []bool{false}}
	longest := 1
	for si, sec := range secrets {
		if sec == "" {
			continue
		}
		longest = max(longest, len(sec))
		s := int32(0)
		for i := range len(sec) {
			c := sec[i]
			var t int32 = -1
			if s == 0 {
				if m.root[c] != 0 {
					t = m.root[c]
				}
			} else {
				t = m.edges[s].get(c)
			}
			if t < 0 {
				t = int32(len(m.fail))
				m.edges = append(m.edges, edgeList{})
				m.fail = append(m.fail, 0)
				m.depth = append(m.depth, m.depth[s]+1)
				m.outLen = append(m.outLen, 0)
				m.stubLen = append(m.stubLen, 0)
				m.wrap = append(m.wrap, false)
				if s == 0 {
					m.root[c] = t
				} else {
					m.edges[s].b = append(m.edges[s].b, c)
					m.edges[s].to = append(m.edges[s].to, t)
				}
			}
			s = t
			if si < len(wrapped) && wrapped[si] {
				m.wrap[s] = true
			}
			if d := i + 1; d >= stubMin(len(sec)) && d < len(sec) {
				m.stubLen[s] = int32(d)
			}
		}
		m.outLen[s] = int32(len(sec))
		if slices.Contains([]byte(sec), ' ') {
			m.special['+'] = true
		}
	}
	m.special['%'], m.special['\\'] = true, true
	// Failure links, breadth first.
	var queue []int32
	for c := range 256 {
		if t := m.root[c]; t != 0 {
			m.fail[t] = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.outLen[s] = max(m.outLen[s], m.outLen[m.fail[s]])
		m.stubLen[s] = max(m.stubLen[s], m.stubLen[m.fail[s]])
		e := &m.edges[s]
		for i, c := range e.b {
			t := e.to[i]
			m.fail[t] = m.step(m.fail[s], c)
			queue = append(queue, t)
		}
	}
	for c := range 256 {
		m.live[c] = m.root[c] != 0 || m.special[c]
	}
	m.ringSize = 1
	for m.ringSize < longest {
		m.ringSize <<= 1
	}
	return m
}

// newFoldMatcher returns a matcher of secrets that ignores the case of ASCII
// letters.
func newFoldMatcher(secrets []string, wrapped []bool) *matcher {
	lowered := make([]string, len(secrets))
	for i, s := range secrets {
		b := []byte(s)
		for j, c := range b {
			b[j] = lower(c)
		}
		lowered[i] = string(b)
	}
	m := newMatcher(lowered, wrapped)
	m.fold = true
	for c := range 256 {
		if m.live[c] {
			m.live[upper(byte(c))] = true
		}
	}
	return m
}

// step returns the state after byte c from state s.
func (m *matcher) step(s int32, c byte) int32 {
	for s != 0 {
		if t := m.edges[s].get(c); t >= 0 {
			return t
		}
		s = m.fail[s]
	}
	return m.root[c]
}

// path is one reading of the text so far: its automaton state and, for its
// last decoded bytes, where each began in the text.
type path struct {
	s    int32
	n    int     // decoded bytes read
	ring []int32 // ring[k&mask]: the text offset of decoded byte k
}

// scratch is what one find needs, pooled so that a clean text costs no
// allocation.
type scratch struct {
	at    [16][]*path // the paths that reach text offset j, at [j&15]
	free  []*path
	spans []span
	stubs bool   // a stub before a closing quote is an occurrence too
	text  []byte // the text searched
}

func (m *matcher) newPath(sc *scratch) *path {
	if n := len(sc.free); n > 0 {
		p := sc.free[n-1]
		sc.free = sc.free[:n-1]
		return p
	}
	return &path{ring: make([]int32, m.ringSize)}
}

// start returns the text offset at which the last k decoded bytes of p
// began.
func (p *path) start(k int32) int {
	return int(p.ring[(p.n-int(k))&(len(p.ring)-1)])
}

// feed reads decoded bytes dec, which began at text offset from and end at
// end, and records an occurrence of a secret that ends in them.
func (m *matcher) feed(sc *scratch, p *path, dec []byte, from, end int) {
	mask := len(p.ring) - 1
	for _, c := range dec {
		if (c == '\n' || c == '\r') && m.wrap[p.s] && m.edges[p.s].get(c) < 0 {
			continue // a line break inside wrapped base64
		}
		if m.fold {
			c = lower(c)
		}
		if c == '"' && sc.stubs {
			// A text cut short inside a secret, quoted: a snapshot of a
			// streamed text, {"text":"ACK:sk-wp-SECR"}.
			if l := m.stubLen[p.s]; l > 0 && !keyFollows(sc.text, end) {
				sc.spans = append(sc.spans, span{p.start(l), from})
			}
		}
		p.ring[p.n&mask] = int32(from)
		p.n++
		p.s = m.step(p.s, c)
		if l := m.outLen[p.s]; l > 0 {
			sc.spans = append(sc.spans, span{p.start(l), end})
		}
	}
}

// fork returns a copy of p (as far as its state can look back).
func (m *matcher) fork(sc *scratch, p *path) *path {
	q := m.newPath(sc)
	q.s, q.n = p.s, p.n
	mask := len(p.ring) - 1
	for k := p.n - int(m.depth[p.s]); k < p.n; k++ {
		q.ring[k&mask] = p.ring[k&mask]
	}
	return q
}

// arrive adds p to the paths that reach text offset j, merging it into one
// in the same state. (Every offset is reached by the raw reading of the
// byte before it, so a reading at the root, which finds nothing another
// reading at the same offset would not, need not be kept beside it; find
// drops one as it forks.)
func (m *matcher) arrive(sc *scratch, p *path, j int) {
	b := &sc.at[j&15]
	for _, q := range *b {
		if q.s == p.s {
			mask := len(p.ring) - 1
			for k := int32(1); k <= m.depth[p.s]; k++ {
				qi, pi := (q.n-int(k))&mask, (p.n-int(k))&mask
				q.ring[qi] = min(q.ring[qi], p.ring[pi])
			}
			sc.free = append(sc.free, p)
			return
		}
	}
	*b = append(*b, p)
}

// find returns the occurrences of the secrets in b, sorted and merged where
// they overlap, and the start of the earliest occurrence that may be cut off
// by the end of b (len(b) if none).
func (m *matcher) find(b []byte) (spans []span, partial int) { return m.search(b, 0) }

// What a search counts as an occurrence besides the secrets themselves.
type stubMode uint8

const (
	// stubQuoted: a stub followed by a double quote (raw or escaped) that
	// does not close an object's key.
	stubQuoted stubMode = 1 << iota
	// stubAtEnd: a stub the text ends with (b is a whole text, not a piece
	// of a stream that may go on).
	stubAtEnd
)

// search is find, also reporting the stubs mode asks for as occurrences.
func (m *matcher) search(b []byte, mode stubMode) (spans []span, partial int) {
	sc, _ := m.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	sc.stubs, sc.text = mode&stubQuoted != 0, b
	partial = len(b)
	var dec [4]byte
	first := m.newPath(sc)
	first.s, first.n = 0, 0
	sc.at[0] = append(sc.at[0], first)
	pending := 1 // paths in sc.at
	for j := 0; j < len(b) && pending > 0; j++ {
		here := sc.at[j&15]
		sc.at[j&15] = here[:0]
		pending -= len(here)
		if len(here) == 1 && pending == 0 {
			// One reading: the fast path, until a byte that may fork it.
			p := here[0]
			for j < len(b) && !m.special[b[j]] {
				if p.s == 0 {
					for j+4 <= len(b) && !m.live[b[j]] && !m.live[b[j+1]] && !m.live[b[j+2]] && !m.live[b[j+3]] {
						j += 4
					}
					for j < len(b) && !m.live[b[j]] {
						j++
					}
					if j == len(b) || m.special[b[j]] {
						break
					}
				}
				dec[0] = b[j]
				m.feed(sc, p, dec[:1], j, j+1)
				j++
			}
			if j == len(b) {
				m.arrive(sc, p, j)
				pending++
				break
			}
			m.tokens(sc, p, b, j, &partial, &pending)
			continue
		}
		for _, p := range here {
			m.tokens(sc, p, b, j, &partial, &pending)
		}
	}
	// The paths left reach the end of b: one inside a secret may be cut off.
	for i := range sc.at {
		for _, p := range sc.at[i] {
			if d := m.depth[p.s]; d > 0 {
				partial = min(partial, p.start(d))
			}
			if l := m.stubLen[p.s]; l > 0 && mode&stubAtEnd != 0 {
				sc.spans = append(sc.spans, span{p.start(l), len(b)})
			}
			sc.free = append(sc.free, p)
		}
		sc.at[i] = sc.at[i][:0]
	}
	if partial < len(b) {
		partial -= escapeBefore(b, partial)
	}
	spans = mergeSpans(b, sc.spans)
	sc.spans, sc.text = sc.spans[:0], nil
	m.pool.Put(sc)
	return spans, partial
}

// tokens moves path p, at text offset j, along every token that begins at
// j: the byte itself, and a percent-encoded byte, a JSON escape or a + where
// one begins. A token cut off by the end of b makes a partial occurrence.
func (m *matcher) tokens(sc *scratch, p *path, b []byte, j int, partial, pending *int) {
	var dec [4]byte
	c := b[j]
	var alt []byte
	altEnd, cut := 0, false
	switch c {
	case '+':
		if m.special['+'] {
			dec[0], alt, altEnd = ' ', dec[:1], j+1
		}
	case '%':
		switch {
		case j+2 < len(b):
			if isHex(b[j+1]) && isHex(b[j+2]) {
				dec[0], alt, altEnd = unhex(b[j+1])<<4|unhex(b[j+2]), dec[:1], j+3
			}
		case j+1 == len(b) || isHex(b[j+1]):
			cut = true
		}
	case '\\':
		alt, altEnd, cut = jsonEscape(b, j, dec[:0])
	}
	if cut {
		st := j
		if d := m.depth[p.s]; d > 0 {
			st = p.start(d)
		}
		*partial = min(*partial, st)
	}
	if alt != nil {
		q := m.fork(sc, p)
		m.feed(sc, q, alt, j, altEnd)
		if q.s == 0 {
			// A reading back at the root is no different from the one
			// the raw bytes bring to altEnd: drop it.
			sc.free = append(sc.free, q)
		} else {
			m.arrive(sc, q, altEnd)
			*pending++
		}
	}
	dec[0] = c
	m.feed(sc, p, dec[:1], j, j+1)
	m.arrive(sc, p, j+1)
	*pending++
}

// stubMin is the fewest first characters of a secret of n bytes that make
// a stub: half of it, at most 8. A secret shorter than 12 bytes has none (n
// itself, which no stub reaches): the start of a short one, and of a short
// token learned from a field (an id, a code of digits), is too likely to end
// some other value.
func stubMin(n int) int {
	if n < 12 {
		return n
	}
	return min(8, (n+1)/2)
}

// keyFollows reports whether the quote that ends before b[i] closes an
// object's key: a colon follows it, after white space.
func keyFollows(b []byte, i int) bool {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i < len(b) && b[i] == ':'
}

// jsonShort maps the second byte of a two-byte JSON escape to the character
// it stands for.
var jsonShort = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// jsonEscape decodes the JSON escape at b[j] (a backslash) into dec and
// returns it with the offset it ends at, or nil; cut reports an escape that
// may be cut off by the end of b.
func jsonEscape(b []byte, j int, dec []byte) (out []byte, end int, cut bool) {
	if j+1 >= len(b) {
		return nil, 0, true
	}
	if s := jsonShort[b[j+1]]; s != 0 {
		return append(dec, s), j + 2, false
	}
	if b[j+1] != 'u' {
		return nil, 0, false
	}
	r, end, ok, cut := hex4(b, j)
	if !ok {
		return nil, 0, cut
	}
	switch {
	case 0xdc00 <= r && r < 0xe000:
		return nil, 0, false // a low surrogate alone stands for no character
	case 0xd800 <= r && r < 0xdc00:
		lo, end2, ok, cut := hex4(b, end)
		if !ok || lo < 0xdc00 || lo >= 0xe000 {
			return nil, 0, cut
		}
		r, end = 0x10000+(r-0xd800)<<10+(lo-0xdc00), end2
	}
	return utf8.AppendRune(dec, r), end, false
}

// hex4 reads the escape \uXXXX at b[j]; cut reports one that may be cut off
// by the end of b.
func hex4(b []byte, j int) (r rune, end int, ok, cut bool) {
	if j+6 > len(b) {
		return 0, 0, false, hexPrefix(b[j:])
	}
	if b[j] != '\\' || b[j+1] != 'u' || !allHex(b[j+2:j+6]) {
		return 0, 0, false, false
	}
	return hexValue(b[j+2 : j+6]), j + 6, true, false
}

// hexPrefix reports whether b (shorter than 6 bytes) may be the start of an
// escape \uXXXX.
func hexPrefix(b []byte) bool {
	const lit = `\u`
	for i, c := range b {
		if i < 2 && c != lit[i] || i >= 2 && !isHex(c) {
			return false
		}
	}
	return true
}

// mergeSpans sorts spans, widens each start over a JSON escape it begins
// inside (so the replacement keeps a JSON string valid) and merges those
// that overlap, into a new slice (nil if there are none).
func mergeSpans(b []byte, spans []span) []span {
	if len(spans) == 0 {
		return nil
	}
	out := make([]span, len(spans))
	for i, sp := range spans {
		out[i] = span{sp.start - escapeBefore(b, sp.start), sp.end}
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// hexValue is the value of the hex digits b.
func hexValue(b []byte) rune {
	var v rune
	for _, c := range b {
		v = v<<4 | rune(unhex(c))
	}
	return v
}

// unhex is the value of the hex digit c.
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// span is b[start:end], an occurrence of a secret.
type span struct{ start, end int }

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
