package filter

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Subject is what an expression is evaluated over: one event, what its
// exchange or connection says of it, and what the decoders made of it.
type Subject struct {
	Seq  uint64
	T    int64 // nanoseconds since the recording started
	Kind string
	Conn string
	Dir  string // c2s, s2c or ""
	// Summary is the event's one line (triage.Summary), searched by bare words.
	Summary string
	// Body is the event's payload as recorded (a WebSocket message, an HTTP
	// body chunk, a log line, a mark); Binary when it arrived binary.
	Body   []byte
	Binary bool

	// Method and URL are the HTTP request's (of the event's exchange), or
	// the WebSocket connection's URL; Status the exchange's response status
	// once it has one.
	Method string
	URL    string
	Status int
	// Header and RespHeader are the exchange's (or connection's) request
	// and response headers.
	Header, RespHeader http.Header

	// Calls are the RPC calls (Effect RPC, JSON-RPC, stream-json) whose
	// messages the event carried.
	Calls []Call
	// Flags are the error flags the event carries (Flag* names).
	Flags []string
}

// Call is an RPC call an event belongs to.
type Call struct {
	Method  string
	Outcome string
}

type node interface {
	match(s *Subject) bool
	needs(n *Needs)
}

type orNode struct{ l, r node }

func (o orNode) match(s *Subject) bool { return o.l.match(s) || o.r.match(s) }
func (o orNode) needs(n *Needs)        { o.l.needs(n); o.r.needs(n) }

type andNode struct{ l, r node }

func (a andNode) match(s *Subject) bool { return a.l.match(s) && a.r.match(s) }
func (a andNode) needs(n *Needs)        { a.l.needs(n); a.r.needs(n) }

type notNode struct{ n node }

func (x notNode) match(s *Subject) bool { return !x.n.match(s) }
func (x notNode) needs(n *Needs)        { x.n.needs(n) }

type allNode struct{}

func (allNode) match(*Subject) bool { return true }
func (allNode) needs(*Needs)        {}

// wordNode is a bare word: case-insensitive text in the summary, the kind,
// the connection, the URL, the RPC methods or the payload.
type wordNode struct{ w string }

func (x wordNode) match(s *Subject) bool {
	for _, f := range []string{s.Summary, s.Kind, s.Conn, s.URL} {
		if containsFold(f, x.w) {
			return true
		}
	}
	for _, c := range s.Calls {
		if containsFold(c.Method, x.w) {
			return true
		}
	}
	return !s.Binary && bytesContainsFold(s.Body, x.w)
}
func (wordNode) needs(n *Needs) { n.Body, n.Summary, n.Calls = true, true, true }

func containsFold(s, lowerSub string) bool {
	return strings.Contains(strings.ToLower(s), lowerSub)
}

func bytesContainsFold(b []byte, lowerSub string) bool {
	if bytes.Contains(b, []byte(lowerSub)) {
		return true
	}
	return bytes.Contains(bytes.ToLower(b), []byte(lowerSub))
}

// bodyNode is ~b (any side), ~bq (what the client sent) and ~bs (what the
// server sent).
type bodyNode struct {
	re  *regexp.Regexp
	dir string
}

func (x bodyNode) match(s *Subject) bool {
	if x.dir != "" && s.Dir != x.dir {
		return false
	}
	return len(s.Body) > 0 && x.re.Match(s.Body)
}
func (bodyNode) needs(n *Needs) { n.Body = true }

type urlNode struct{ re *regexp.Regexp }

func (x urlNode) match(s *Subject) bool { return s.URL != "" && x.re.MatchString(s.URL) }
func (urlNode) needs(*Needs)            {}

type methodNode struct{ re *regexp.Regexp }

func (x methodNode) match(s *Subject) bool { return s.Method != "" && x.re.MatchString(s.Method) }
func (methodNode) needs(*Needs)            {}

// headerNode matches "Name: value" lines of the request (side 1), the
// response (2) or either (3).
type headerNode struct {
	re   *regexp.Regexp
	side int
}

func (x headerNode) match(s *Subject) bool {
	return (x.side&1 != 0 && headerMatch(x.re, s.Header)) || (x.side&2 != 0 && headerMatch(x.re, s.RespHeader))
}
func (headerNode) needs(*Needs) {}

func headerMatch(re *regexp.Regexp, h http.Header) bool {
	for k, vs := range h {
		for _, v := range vs {
			if re.MatchString(k + ": " + v) {
				return true
			}
		}
	}
	return false
}

// contentTypeNode is mitmproxy's ~t: the Content-Type of the side the event
// is on (the request's for c2s, the response's for s2c, either otherwise).
type contentTypeNode struct{ re *regexp.Regexp }

func (x contentTypeNode) match(s *Subject) bool {
	q, r := s.Header.Get("Content-Type"), s.RespHeader.Get("Content-Type")
	switch s.Dir {
	case "c2s":
		r = ""
	case "s2c":
		q = ""
	}
	return (q != "" && x.re.MatchString(q)) || (r != "" && x.re.MatchString(r))
}
func (contentTypeNode) needs(*Needs) {}

type rpcNode struct{ re *regexp.Regexp }

func (x rpcNode) match(s *Subject) bool {
	for _, c := range s.Calls {
		if x.re.MatchString(c.Method) {
			return true
		}
	}
	return false
}
func (rpcNode) needs(n *Needs) { n.Calls = true }

type outcomeMatch struct{ o string }

func (x outcomeMatch) match(s *Subject) bool {
	for _, c := range s.Calls {
		if c.Outcome == x.o {
			return true
		}
	}
	return false
}
func (outcomeMatch) needs(n *Needs) { n.Calls = true }

type statusRange struct{ lo, hi int }

func (x statusRange) match(s *Subject) bool {
	return s.Status != 0 && s.Status >= x.lo && s.Status <= x.hi
}
func (statusRange) needs(*Needs) {}

// kindMatch is an exact kind or a family: "ws" takes ws.message, ws.open...
type kindMatch struct{ k string }

func (x kindMatch) match(s *Subject) bool {
	return s.Kind == x.k || strings.HasPrefix(s.Kind, x.k+".") || (strings.HasSuffix(x.k, ".") && strings.HasPrefix(s.Kind, x.k))
}
func (kindMatch) needs(*Needs) {}

type connMatch struct{ c string }

// connNode is a connection id, exact.
type connNode = connMatch

func (x connMatch) match(s *Subject) bool { return s.Conn == x.c }
func (connMatch) needs(*Needs)            {}

type dirMatch struct{ d string }

func (x dirMatch) match(s *Subject) bool { return s.Dir == x.d }
func (dirMatch) needs(*Needs)            {}

type seqRange struct{ lo, hi uint64 }

func (x seqRange) match(s *Subject) bool { return s.Seq >= x.lo && s.Seq <= x.hi }
func (seqRange) needs(*Needs)            {}

type timeRange struct{ lo, hi time.Duration }

func (x timeRange) match(s *Subject) bool {
	t := time.Duration(s.T)
	return t >= x.lo && t <= x.hi
}
func (timeRange) needs(*Needs) {}

// flagsNode is ~e (any flag) or ~flag NAME.
type flagsNode struct{ name string }

func (x flagsNode) match(s *Subject) bool {
	if x.name == "" {
		return len(s.Flags) > 0
	}
	for _, f := range s.Flags {
		if f == x.name {
			return true
		}
	}
	return false
}
func (flagsNode) needs(n *Needs) { n.Flags = true }

// jsonPath is ~j PATH or ~j PATH=VALUE: a dotted path into the payload's
// JSON ("values.0.kind", "*" for any member or element) that exists, or
// whose value equals VALUE (a JSON literal, or else a string).
type jsonPath struct {
	path  []string
	value any // nil: only that the path exists
	has   bool
}

func jsonNode(a string) (node, error) {
	p, v, has := strings.Cut(a, "=")
	if p == "" {
		return nil, errEmptyPath
	}
	x := jsonPath{path: strings.Split(strings.TrimPrefix(p, "."), "."), has: has}
	for _, seg := range x.path {
		if seg == "" {
			return nil, errEmptyPath
		}
	}
	if has {
		var lit any
		if json.Unmarshal([]byte(v), &lit) == nil {
			x.value = lit
		} else {
			x.value = v
		}
	}
	return x, nil
}

type pathError string

func (e pathError) Error() string { return string(e) }

const errEmptyPath = pathError("a path segment is empty")

func (x jsonPath) match(s *Subject) bool {
	if s.Binary || len(s.Body) == 0 {
		return false
	}
	b := bytes.TrimSpace(s.Body)
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return false
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	return x.walk(v, x.path)
}

func (x jsonPath) walk(v any, path []string) bool {
	if len(path) == 0 {
		return !x.has || equal(v, x.value)
	}
	seg, rest := path[0], path[1:]
	switch t := v.(type) {
	case map[string]any:
		if seg == "*" {
			for _, c := range t {
				if x.walk(c, rest) {
					return true
				}
			}
			return false
		}
		c, ok := t[seg]
		return ok && x.walk(c, rest)
	case []any:
		if seg == "*" {
			for _, c := range t {
				if x.walk(c, rest) {
					return true
				}
			}
			return false
		}
		i, err := strconv.Atoi(seg)
		return err == nil && i >= 0 && i < len(t) && x.walk(t[i], rest)
	}
	return false
}

// equal compares a decoded value (numbers as json.Number) with a literal.
func equal(v, lit any) bool {
	switch l := lit.(type) {
	case float64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == l
	case string:
		switch t := v.(type) {
		case string:
			return t == l
		case json.Number:
			return t.String() == l
		}
		return false
	case bool:
		b, ok := v.(bool)
		return ok && b == l
	case nil:
		return v == nil
	}
	a, _ := json.Marshal(v)
	b, _ := json.Marshal(lit)
	return bytes.Equal(a, b)
}

func (jsonPath) needs(n *Needs) { n.Body = true }
