package playback

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/wireproof/wireproof/internal/scrub"
)

// redacted is what the recorder writes in place of a credential. A recorded
// value holding it matches whatever the client sends there.
const redacted = "[REDACTED]"

// idMap is the mapping learned from recorded ids to the client's, one to one.
// Safe for concurrent use.
type idMap struct {
	mu  sync.Mutex
	fwd map[string]string // recorded -> live
	rev map[string]string // live -> recorded
	// pairs are the replacements made in replies: recorded spellings and
	// their live counterparts, rebuilt when the map grows.
	repl *strings.Replacer
}

func newIDMap() *idMap {
	return &idMap{fwd: map[string]string{}, rev: map[string]string{}}
}

// binding is a tentative extension of an idMap, made while one candidate is
// compared with a live request, and committed only if that candidate is
// chosen.
type binding struct {
	m    *idMap // read under m.mu, held by the caller
	fwd  map[string]string
	rev  map[string]string
	fail string // the first conflict seen, for the miss explanation
}

func (m *idMap) begin() *binding { return &binding{m: m} }

// bind records that the recorded id rec stands for the client's live. It
// fails if either is already bound to something else.
func (b *binding) bind(rec, live string) bool {
	if rec == live {
		// The client sent the recorded value back (a server-made id):
		// nothing to learn, but it must not be the image of another id.
		if r, ok := b.reverse(live); ok && r != rec {
			b.conflict(rec, live)
			return false
		}
		return true
	}
	if l, ok := b.forward(rec); ok {
		if l != live {
			b.conflict(rec, live)
		}
		return l == live
	}
	if r, ok := b.reverse(live); ok {
		if r != rec {
			b.conflict(rec, live)
		}
		return r == rec
	}
	if b.fwd == nil {
		b.fwd, b.rev = map[string]string{}, map[string]string{}
	}
	b.fwd[rec], b.rev[live] = live, rec
	return true
}

func (b *binding) conflict(rec, live string) {
	if b.fail == "" {
		b.fail = "recorded id " + rec + " is already bound to another value than " + live
	}
}

func (b *binding) forward(rec string) (string, bool) {
	if l, ok := b.fwd[rec]; ok {
		return l, true
	}
	l, ok := b.m.fwd[rec]
	return l, ok
}

func (b *binding) reverse(live string) (string, bool) {
	if r, ok := b.rev[live]; ok {
		return r, true
	}
	r, ok := b.m.rev[live]
	return r, ok
}

// commit adds the binding's pairs to the map. The caller holds m.mu.
func (b *binding) commit() {
	if len(b.fwd) == 0 {
		return
	}
	for k, v := range b.fwd {
		b.m.fwd[k] = v
		b.m.rev[v] = k
	}
	b.m.repl = nil
}

// Map returns a copy of the pairs learned so far, recorded to live.
func (m *idMap) Map() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.fwd))
	for k, v := range m.fwd {
		out[k] = v
	}
	return out
}

// apply returns b with every recorded id replaced by the client's. UUIDs are
// replaced wherever they stand; other ids only as whole JSON strings, so a
// short id does not shred unrelated text.
func (m *idMap) apply(b []byte) []byte {
	m.mu.Lock()
	r := m.repl
	if r == nil && len(m.fwd) > 0 {
		var pairs []string
		for rec, live := range m.fwd {
			if rec == live {
				continue
			}
			if scrub.UUID.MatchString(rec) && len(rec) == 36 {
				pairs = append(pairs, rec, live)
				// Case differs between encoders; ids are compared as text,
				// so only the spellings recorded are replaced.
			} else {
				pairs = append(pairs, `"`+rec+`"`, `"`+live+`"`)
			}
		}
		r = strings.NewReplacer(pairs...)
		m.repl = r
	}
	m.mu.Unlock()
	if r == nil || len(b) == 0 {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b))
	r.WriteString(&out, string(b))
	return out.Bytes()
}

// applyString is apply for a string.
func (m *idMap) applyString(s string) string { return string(m.apply([]byte(s))) }

// token kinds inside a recorded string.
type tokenKind int

const (
	tokLiteral tokenKind = iota
	tokID                // a UUID: unified with the client's
	tokPort              // a loopback address: the port is ignored
	tokTime              // a timestamp: any timestamp matches
	tokAny               // [REDACTED]: anything matches
)

// pattern is a recorded string compiled for unification: a regexp whose
// groups capture the client's values for the recorded ids.
type pattern struct {
	re  *regexp.Regexp
	ids []string // the recorded UUID of each capturing group, in order
}

var patterns sync.Map // string -> *pattern (nil: the string has no tokens)

// patternOf compiles s, or returns nil if s holds nothing to unify.
func patternOf(s string) *pattern {
	if p, ok := patterns.Load(s); ok {
		return p.(*pattern)
	}
	if !utf8.ValidString(s) {
		return nil // not text (regexps need UTF-8): compared exactly
	}
	type span struct {
		i, j int
		kind tokenKind
	}
	var spans []span
	add := func(re *regexp.Regexp, kind tokenKind) {
		for _, m := range re.FindAllStringIndex(s, -1) {
			overlaps := false
			for _, o := range spans {
				if m[0] < o.j && o.i < m[1] {
					overlaps = true
					break
				}
			}
			if !overlaps {
				spans = append(spans, span{m[0], m[1], kind})
			}
		}
	}
	add(redactedRE, tokAny)
	add(scrub.UUID, tokID)
	add(scrub.Loopback, tokPort)
	add(scrub.Time, tokTime)
	var p *pattern
	if len(spans) > 0 {
		sortSpans := func() {
			for i := 1; i < len(spans); i++ {
				for j := i; j > 0 && spans[j].i < spans[j-1].i; j-- {
					spans[j], spans[j-1] = spans[j-1], spans[j]
				}
			}
		}
		sortSpans()
		var re strings.Builder
		re.WriteString(`(?s)^`)
		p = &pattern{}
		at := 0
		for _, sp := range spans {
			re.WriteString(regexp.QuoteMeta(s[at:sp.i]))
			switch sp.kind {
			case tokAny:
				re.WriteString(`.*?`)
			case tokID:
				re.WriteString(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})`)
				p.ids = append(p.ids, s[sp.i:sp.j])
			case tokPort:
				host := scrub.Loopback.FindStringSubmatch(s[sp.i:sp.j])[1]
				re.WriteString(regexp.QuoteMeta(host) + `:[0-9]+`)
			case tokTime:
				re.WriteString(`(?:` + scrub.Time.String() + `)`)
			}
			at = sp.j
		}
		re.WriteString(regexp.QuoteMeta(s[at:]))
		re.WriteString(`$`)
		p.re = regexp.MustCompile(re.String())
	}
	patterns.Store(s, p)
	return p
}

var redactedRE = regexp.MustCompile(regexp.QuoteMeta(redacted))

// unifyString reports whether the live string matches the recorded one,
// binding the ids it holds. idField says the string is the value of a field
// named like an id, so any two values are an id pair.
func (b *binding) unifyString(rec, live string, idField bool) bool {
	if rec == live {
		if idField {
			return b.bind(rec, live)
		}
		return true
	}
	if p := patternOf(rec); p != nil {
		if m := p.re.FindStringSubmatch(live); m != nil {
			for i, id := range p.ids {
				if !b.bind(id, m[i+1]) {
					return false
				}
			}
			return true
		}
	}
	if idField && rec != "" && live != "" {
		return b.bind(rec, live)
	}
	return false
}

// isIDField reports whether a JSON field of this name holds an id.
func isIDField(name string) bool {
	return name == "id" || strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "ID")
}

// unify reports whether the live JSON value matches the recorded one (both
// as decoded by decodeJSON), binding the ids found on the way.
func (b *binding) unify(rec, live any, field string) bool {
	switch r := rec.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok || len(l) != len(r) {
			return false
		}
		for k, rv := range r {
			lv, ok := l[k]
			if !ok || !b.unify(rv, lv, k) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(r) {
			return false
		}
		for i := range r {
			if !b.unify(r[i], l[i], field) {
				return false
			}
		}
		return true
	case string:
		l, ok := live.(string)
		return ok && b.unifyString(r, l, isIDField(field))
	default:
		return equalScalar(rec, live)
	}
}
