// Package filter is wireproof's filter language over a bundle's events and
// their decoded content: mitmproxy's filter expressions (~b, ~bq, ~bs, ~c,
// ~u, ~m, ~h, ~hq, ~hs, ~t, ~e, !, &, |, parentheses, regex arguments) and
// wireproof's own operators (~k event kind, ~conn, ~dir, ~rpc, ~outcome, ~j
// JSON path, ~seq, ~time, ~flag). `inspect --filter` and the viewer's search
// box parse the same expressions here; docs/filter.md is their reference.
package filter

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SyntaxError is an expression that does not parse: where (a 1-based
// column, in characters) and what was expected there.
type SyntaxError struct {
	Expr     string
	Column   int
	Expected string
	Found    string // what stood there instead; "" at the end of the expression
}

func (e *SyntaxError) Error() string {
	found := "the end of the expression"
	if e.Found != "" {
		found = strconv.Quote(e.Found)
	}
	return fmt.Sprintf("filter %q: column %d: expected %s, found %s", e.Expr, e.Column, e.Expected, found)
}

// Expr is a parsed expression.
type Expr struct {
	src  string
	root node
}

// String is the expression as it was written.
func (e *Expr) String() string { return e.src }

// Match reports whether the expression holds for s.
func (e *Expr) Match(s *Subject) bool { return e.root.match(s) }

// Needs reports what of an event the expression reads beyond its envelope
// (seq, time, kind, connection, direction, URL, method, status, headers), so
// a caller can skip decoding what no operator looks at.
func (e *Expr) Needs() Needs {
	var n Needs
	e.root.needs(&n)
	return n
}

// Needs is what an expression reads beyond an event's envelope.
type Needs struct {
	Body    bool // ~b, ~bq, ~bs, ~j and bare words read the payload
	Summary bool // bare words read the one-line summary
	Calls   bool // ~rpc, ~outcome read the calls an event belongs to
	Flags   bool // ~e, ~flag read the error flags
}

// Parse parses an expression. An empty one (only spaces) is an error: a
// caller with nothing to filter by passes no expression.
func Parse(src string) (*Expr, error) {
	p := &parser{src: src}
	p.next()
	if p.tok.kind == tEOF {
		return nil, p.fail("an expression")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.fail("an operator (& or |) or the end of the expression")
	}
	return &Expr{src: src, root: n}, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tAnd
	tOr
	tNot
	tOpen
	tClose
	tOp   // ~name
	tWord // a bare or quoted word
	tBad  // an unterminated quote
)

type token struct {
	kind   tokKind
	text   string // the operator's name or the word's value
	raw    string // as written
	pos    int    // byte offset
	quoted bool
}

type parser struct {
	src string
	off int
	tok token
}

// column is the 1-based character column of byte offset off.
func (p *parser) column(off int) int { return utf8.RuneCountInString(p.src[:off]) + 1 }

func (p *parser) fail(expected string) error {
	found := p.tok.raw
	if p.tok.kind == tBad {
		expected = "a closing " + p.tok.raw[:1]
		found = ""
	}
	return &SyntaxError{Expr: p.src, Column: p.column(p.tok.pos), Expected: expected, Found: found}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// special ends a bare word.
func special(c byte) bool { return isSpace(c) || c == '(' || c == ')' || c == '&' || c == '|' }

func (p *parser) next() {
	for p.off < len(p.src) && isSpace(p.src[p.off]) {
		p.off++
	}
	start := p.off
	if p.off >= len(p.src) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := p.src[p.off]
	single := map[byte]tokKind{'&': tAnd, '|': tOr, '!': tNot, '(': tOpen, ')': tClose}
	if k, ok := single[c]; ok {
		p.off++
		p.tok = token{kind: k, raw: string(c), pos: start}
		return
	}
	if c == '"' || c == '\'' {
		var b strings.Builder
		i := p.off + 1
		for i < len(p.src) && p.src[i] != c {
			if p.src[i] == '\\' && i+1 < len(p.src) {
				i++
			}
			b.WriteByte(p.src[i])
			i++
		}
		if i >= len(p.src) {
			p.off = len(p.src)
			p.tok = token{kind: tBad, raw: p.src[start:], pos: start}
			return
		}
		p.off = i + 1
		p.tok = token{kind: tWord, text: b.String(), raw: p.src[start:p.off], pos: start, quoted: true}
		return
	}
	i := p.off
	for i < len(p.src) && !special(p.src[i]) {
		i++
	}
	p.off = i
	w := p.src[start:i]
	if c == '~' && len(w) > 1 {
		p.tok = token{kind: tOp, text: w[1:], raw: w, pos: start}
		return
	}
	p.tok = token{kind: tWord, text: w, raw: w, pos: start}
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tOr {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = orNode{l, r}
	}
	return l, nil
}

// and joins terms by & or by juxtaposition, as mitmproxy does.
func (p *parser) and() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		switch p.tok.kind {
		case tAnd:
			p.next()
		case tNot, tOpen, tOp, tWord, tBad:
		default:
			return l, nil
		}
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = andNode{l, r}
	}
}

func (p *parser) unary() (node, error) {
	switch p.tok.kind {
	case tNot:
		p.next()
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	case tOpen:
		p.next()
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tClose {
			return nil, p.fail("a closing )")
		}
		p.next()
		return n, nil
	case tWord:
		w := p.tok.text
		p.next()
		return wordNode{strings.ToLower(w)}, nil
	case tOp:
		return p.operator()
	}
	return nil, p.fail("a filter (~b, ~k, ..., a word, ! or a parenthesis)")
}

// operator parses ~name and its argument.
func (p *parser) operator() (node, error) {
	op := p.tok
	spec, ok := operators[op.text]
	if !ok {
		return nil, &SyntaxError{Expr: p.src, Column: p.column(op.pos), Expected: "an operator (" + operatorList() + ")", Found: op.raw}
	}
	p.next()
	if spec.arg == "" {
		return spec.make("")
	}
	if p.tok.kind != tWord {
		return nil, p.fail(spec.arg + " after " + op.raw)
	}
	arg := p.tok
	p.next()
	n, err := spec.make(arg.text)
	if err != nil {
		return nil, &SyntaxError{Expr: p.src, Column: p.column(arg.pos), Expected: spec.arg + " after " + op.raw + " (" + err.Error() + ")", Found: arg.raw}
	}
	return n, nil
}

type opSpec struct {
	arg  string // what the argument is, for errors; "" when it takes none
	make func(arg string) (node, error)
}

var operators map[string]opSpec

func init() {
	re := func(f func(*regexp.Regexp) node) func(string) (node, error) {
		return func(a string) (node, error) {
			r, err := regexp.Compile("(?i)" + a)
			if err != nil {
				return nil, fmt.Errorf("a regular expression: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			return f(r), nil
		}
	}
	operators = map[string]opSpec{
		"b":       {"a regular expression", re(func(r *regexp.Regexp) node { return bodyNode{r, ""} })},
		"bq":      {"a regular expression", re(func(r *regexp.Regexp) node { return bodyNode{r, "c2s"} })},
		"bs":      {"a regular expression", re(func(r *regexp.Regexp) node { return bodyNode{r, "s2c"} })},
		"u":       {"a regular expression", re(func(r *regexp.Regexp) node { return urlNode{r} })},
		"m":       {"a regular expression", re(func(r *regexp.Regexp) node { return methodNode{r} })},
		"h":       {"a regular expression", re(func(r *regexp.Regexp) node { return headerNode{r, 3} })},
		"hq":      {"a regular expression", re(func(r *regexp.Regexp) node { return headerNode{r, 1} })},
		"hs":      {"a regular expression", re(func(r *regexp.Regexp) node { return headerNode{r, 2} })},
		"t":       {"a regular expression", re(func(r *regexp.Regexp) node { return contentTypeNode{r} })},
		"rpc":     {"a regular expression", re(func(r *regexp.Regexp) node { return rpcNode{r} })},
		"c":       {"a status code (200, 4xx or 400-499)", statusNode},
		"k":       {"an event kind (ws.message) or family (ws)", kindNode},
		"conn":    {"a connection id", func(a string) (node, error) { return connNode{a}, nil }},
		"dir":     {"a direction (c2s or s2c)", dirNode},
		"outcome": {"a call outcome (success, failure, defect, interrupted, unknown, open)", outcomeNode},
		"j":       {"a JSON path (a.b.0.c, * for any member, =VALUE to compare)", jsonNode},
		"seq":     {"a seq (N, A-B, A- or -B)", seqNode},
		"time":    {"a time range since the recording started (2s, 1.5-3, 500ms-2s)", timeNode},
		"flag":    {"an error flag (" + strings.Join(FlagNames, ", ") + ")", flagNode},
		"e":       {"", func(string) (node, error) { return flagsNode{""}, nil }},
		"all":     {"", func(string) (node, error) { return allNode{}, nil }},
	}
}

// operatorList names every operator, for the error on an unknown one.
func operatorList() string {
	return "~b ~bq ~bs ~c ~u ~m ~h ~hq ~hs ~t ~e ~all ~k ~conn ~dir ~rpc ~outcome ~j ~seq ~time ~flag"
}

func statusNode(a string) (node, error) {
	if len(a) == 3 && strings.HasSuffix(a, "xx") && a[0] >= '1' && a[0] <= '5' {
		lo := int(a[0]-'0') * 100
		return statusRange{lo, lo + 99}, nil
	}
	lo, hi, err := intRange(a)
	if err != nil {
		return nil, err
	}
	return statusRange{int(lo), int(hi)}, nil
}

// intRange parses N, A-B, A- or -B.
func intRange(a string) (uint64, uint64, error) {
	l, r, isRange := strings.Cut(a, "-")
	lo, hi := uint64(0), ^uint64(0)
	var err error
	if l != "" {
		if lo, err = strconv.ParseUint(l, 10, 63); err != nil {
			return 0, 0, fmt.Errorf("%q is not a whole number", l)
		}
	}
	if !isRange {
		if l == "" {
			return 0, 0, fmt.Errorf("empty")
		}
		return lo, lo, nil
	}
	if r != "" {
		if hi, err = strconv.ParseUint(r, 10, 63); err != nil {
			return 0, 0, fmt.Errorf("%q is not a whole number", r)
		}
	}
	if l == "" && r == "" {
		return 0, 0, fmt.Errorf("a range needs at least one end")
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("%d is after %d", lo, hi)
	}
	return lo, hi, nil
}

func seqNode(a string) (node, error) {
	lo, hi, err := intRange(a)
	if err != nil {
		return nil, err
	}
	return seqRange{lo, hi}, nil
}

// duration parses a Go duration or plain seconds.
func duration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (2s, 1.5, 500ms)", s)
	}
	return d, nil
}

func timeNode(a string) (node, error) {
	l, r, isRange := strings.Cut(a, "-")
	lo, hi := time.Duration(0), time.Duration(1<<63-1)
	var err error
	if l != "" {
		if lo, err = duration(l); err != nil {
			return nil, err
		}
	}
	if !isRange {
		if l == "" {
			return nil, fmt.Errorf("empty")
		}
		// One time: that second (or unit) of the recording, from it to the next whole one.
		return timeRange{lo, lo + time.Second - 1}, nil
	}
	if r != "" {
		if hi, err = duration(r); err != nil {
			return nil, err
		}
	}
	if l == "" && r == "" {
		return nil, fmt.Errorf("a range needs at least one end")
	}
	if lo > hi {
		return nil, fmt.Errorf("%s is after %s", lo, hi)
	}
	return timeRange{lo, hi}, nil
}

func kindNode(a string) (node, error) {
	if a == "" || strings.ContainsAny(a, " \t") {
		return nil, fmt.Errorf("empty")
	}
	return kindMatch{strings.ToLower(a)}, nil
}

func dirNode(a string) (node, error) {
	switch strings.ToLower(a) {
	case "c2s", "client", "request":
		return dirMatch{"c2s"}, nil
	case "s2c", "server", "response":
		return dirMatch{"s2c"}, nil
	}
	return nil, fmt.Errorf("%q is neither", a)
}

// Outcomes are the outcomes ~outcome takes (effectrpc's, which the
// JSON-RPC and stream-json calls share).
var Outcomes = []string{"success", "failure", "defect", "interrupted", "unknown", "open"}

func outcomeNode(a string) (node, error) {
	a, err := oneOf(a, Outcomes)
	return outcomeMatch{a}, err
}

func flagNode(a string) (node, error) {
	a, err := oneOf(a, FlagNames)
	return flagsNode{a}, err
}

// oneOf is a, lowered, when it is one of names.
func oneOf(a string, names []string) (string, error) {
	a = strings.ToLower(a)
	if !slices.Contains(names, a) {
		return "", fmt.Errorf("%q is not one", a)
	}
	return a, nil
}
