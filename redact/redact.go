// Package redact finds the secrets of a recording in text, in every spelling
// they take on the wire, and replaces them with "[REDACTED]": secrets given
// to it, the values of token fields it learns as it reads, credential
// headers, and the base64 of what it was given. A Redactor holds the secrets
// of one recording (record's Recorder redacts every event with one); a
// Stream cuts a body that arrives in chunks so no secret is split between
// two pieces; Text redacts one string with a redactor of its own (a command
// line, a HAR query value).
package redact

import (
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
// whose values are credentials in any OAuth-style protocol: the token fields
// a Redactor knows when it is given none. A protocol with names of its own
// supplies them (t3.TokenFields, a T3 recording's whole set, holds these
// and T3's own).
var DefaultTokenFields = []string{"access_token", "refresh_token", "id_token", "subject_token", "token"}

// Options are the secrets and token fields of Text. A nil *Options means
// no secrets and DefaultTokenFields.
type Options struct {
	// Secrets are replaced wherever they occur, in any spelling.
	Secrets []string
	// TokenFields name the fields whose values are learned as secrets; nil
	// means DefaultTokenFields.
	TokenFields []string
}

// minLearned is the shortest value learned from a token field or a credential
// header as a secret. Shorter values are still replaced where they stand, but
// replacing them everywhere would shred unrelated text ("1", "true").
const minLearned = 6

// Set is an immutable snapshot of the secrets: one pattern per secret,
// each finding it in every spelling it may take on the wire (see pattern).
type Set struct {
	secrets []string // each secret, and the base64 spellings of those given
	base64  []bool   // whether secrets[i] is a base64 spelling
	m       *matcher // nil if there are none

	foldOnce sync.Once
	fold     *matcher // the secrets in lower case, for header names
}

// newSet returns the set of secrets.
func newSet(secrets []string, base64 []bool) *Set {
	if len(secrets) == 0 {
		return &Set{}
	}
	return &Set{secrets: secrets, base64: base64, m: newMatcher(secrets, base64)}
}

// name returns the header name k with every secret in it replaced, its case
// ignored (the case a name was sent in is lost before it is recorded).
func (s *Set) name(k string) string {
	if s.m == nil {
		return k
	}
	s.foldOnce.Do(func() { s.fold = newFoldMatcher(s.secrets, s.base64) })
	spans, _ := s.fold.find([]byte(k))
	if len(spans) == 0 {
		return k
	}
	return string(replaceSpans([]byte(k), spans))
}

// find returns the occurrences of the secrets in b and where the earliest
// that b may cut off begins (len(b) if none).
func (s *Set) find(b []byte) ([]span, int) {
	if s.m == nil {
		return nil, len(b)
	}
	return s.m.find(b)
}

// findText returns the occurrences of the secrets in b, a whole text, and
// of their stubs that b cuts short: one followed by a quote that closes no
// key, or one b ends with. A streamed text is recorded in snapshots (the
// text so far, in every update of a message), and a snapshot taken between
// two pieces of a secret holds its start: {"text":"ACK:sk-wp-SECR"}.
func (s *Set) findText(b []byte) []span {
	if s.m == nil {
		return nil
	}
	spans, _ := s.m.search(b, stubQuoted|stubAtEnd)
	return spans
}

// A Redactor holds the secrets of a recording. Lookups take an atomic
// snapshot (Snapshot); adding a secret copies the set, which happens a
// handful of times per run. It is safe for concurrent use.
type Redactor struct {
	fields *fieldSet // never changes

	mu    sync.Mutex
	known map[string]bool // the secrets added
	in    map[string]bool // what the set holds: the secrets and their spellings
	set   atomic.Pointer[Set]
}

// New returns a Redactor of secrets that learns the values of the token
// fields named (DefaultTokenFields if nil).
func New(secrets, tokenFields []string) *Redactor {
	r := &Redactor{fields: newFieldSet(tokenFields), known: map[string]bool{}, in: map[string]bool{}}
	var all []string
	var b64 []bool
	for _, s := range secrets {
		all, b64 = r.spellings(all, b64, s, false)
	}
	r.set.Store(newSet(all, b64))
	return r
}

// Snapshot returns the secrets known now, to redact with.
func (r *Redactor) Snapshot() *Set { return r.set.Load() }

// Add adds a secret given by the user, or learned at runtime (a bootstrap
// token, an access token), with its base64 spellings: every later
// occurrence is replaced. It reports whether the set changed.
func (r *Redactor) Add(s string) bool { return r.add(s, false) }

// Header returns h redacted as the header of a recorded event is (credential
// values masked, and learned as secrets; secrets replaced in names and
// values), with the secrets known now. h is not modified.
func (r *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	ev := bundle.Event{Header: h}
	r.Event(&ev, r.Snapshot())
	return ev.Header
}

// String returns s with every secret of set, and every token field value,
// replaced.
func (r *Redactor) String(s string, set *Set) string { return r.str(s, set) }

// add adds secret s (learned: found in a token field, so subject to
// minLearned). A secret given by the user also gets its base64 spellings. It
// reports whether the set changed. The matcher is built anew, in time linear
// in the secrets' length: that happens a handful of times per run.
func (r *Redactor) add(s string, learned bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.set.Load()
	all, b64 := r.spellings(slices.Clip(old.secrets), slices.Clip(old.base64), s, learned)
	if len(all) == len(old.secrets) {
		return false
	}
	r.set.Store(newSet(all, b64))
	return true
}

// spellings appends to all secret s and, unless learned, its base64
// spellings (marked in b64), if s is one to add and is new. r.mu is held (or
// r is not shared yet).
func (r *Redactor) spellings(all []string, b64 []bool, s string, learned bool) ([]string, []bool) {
	if s == "" || strings.Contains(s, Redacted) || (learned && len(s) < minLearned) || r.known[s] {
		return all, b64
	}
	r.known[s] = true
	news := []string{s}
	if !learned {
		news = append(news, spelling.Base64Stable(s)...)
	}
	for i, v := range news {
		if !r.in[v] {
			r.in[v] = true
			all, b64 = append(all, v), append(b64, i > 0)
		}
	}
	return all, b64
}

// Text returns s with every secret of o, and every value of a token field of
// o, replaced by "[REDACTED]", as a Redactor made with o's secrets and fields
// redacts them. It is for text that never passes through a recording, such
// as the command line written into a bundle's header.
//
// The password of a URL's userinfo (scheme://user:password@host) is
// replaced too, and redacted wherever else it occurs in s.
func Text(s string, o *Options) string {
	if o == nil {
		o = &Options{}
	}
	r := New(o.Secrets, o.TokenFields)
	for _, m := range userinfoPassword.FindAllStringSubmatch(s, -1) {
		if p, err := url.PathUnescape(m[2]); err == nil {
			r.add(p, true)
		}
		r.add(m[2], true)
	}
	s = userinfoPassword.ReplaceAllString(s, "${1}"+Redacted+"@")
	r.learn([]byte(s))
	return string(r.Bytes([]byte(s), r.Snapshot()))
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

// Event redacts every textual field of ev in place with the secrets of set
// (and those its token fields and credential headers teach). It never writes into the
// bytes or header maps ev points to: changed values are new allocations, so a
// caller may go on relaying the original bytes.
func (r *Redactor) Event(ev *bundle.Event, set *Set) {
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
	bodyHint := r.fields.hintMemo(ev.Body.Data)
	if bodyHint {
		learned = r.learnFields(ev.Body.Data) || learned
	}
	if learned {
		set = r.Snapshot()
	}

	if ev.Header != nil {
		ev.Header = r.header(ev.Header, set)
	}
	ev.URL = r.str(ev.URL, set)
	ev.Reason = r.str(ev.Reason, set)
	ev.Err = r.str(ev.Err, set)
	ev.Name = r.str(ev.Name, set)
	ev.Method = r.str(ev.Method, set)
	if ev.Body.Data != nil {
		ev.Body.Data = r.textHinted(ev.Body.Data, set, bodyHint)
	}
	if ev.Attrs != nil {
		ev.Attrs = r.Bytes(ev.Attrs, set)
	}
}

func (r *Redactor) str(s string, set *Set) string {
	if s == "" {
		return s
	}
	b := r.Bytes([]byte(s), set)
	if len(b) == len(s) && string(b) == s {
		return s
	}
	return string(b)
}

// header returns h with credential headers masked and secrets replaced, in
// values and in names, cloning h only if something changes. A name is
// searched without regard to case: Go's HTTP server and client give a header
// name its canonical case (x-ab-cd as X-Ab-Cd) before the recorder sees it.
func (r *Redactor) header(h http.Header, set *Set) http.Header {
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
		if nk := set.name(k); nk != k {
			if out == nil {
				out = h.Clone()
			}
			out[nk] = append(out[nk], out[k]...)
			delete(out, k)
		}
	}
	if out == nil {
		return h
	}
	return out
}

// learn adds the value of every token field in b as a secret and reports
// whether any was new.
func (r *Redactor) learn(b []byte) bool {
	return r.fields.hintMemo(b) && r.learnFields(b)
}

// learnFields is learn for b known to hold a token field name.
func (r *Redactor) learnFields(b []byte) bool {
	learned := false
	r.fields.scan(b, func(f field) {
		for _, s := range f.values(b) {
			learned = r.add(s, true) || learned
		}
	})
	return learned
}

// Bytes returns b with token field values and secrets of set replaced. It returns b
// itself when nothing needs replacing (the common, allocation-free path) and a
// new slice otherwise.
func (r *Redactor) Bytes(b []byte, set *Set) []byte {
	return r.textHinted(b, set, r.fields.hintMemo(b))
}

// textHinted is Bytes for b of which hint says whether it holds a token field
// name.
func (r *Redactor) textHinted(b []byte, set *Set, hint bool) []byte {
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
	if set.m == nil {
		return out
	}
	return replaceSpans(out, set.findTextMemo(out))
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
