package cassette

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// token classes: run-bound values set apart when strings are compared. A
// temporary directory is the path under the system's temp directory as far
// as each segment has a digit (os.MkdirTemp's random suffix, a test's
// numbered directory): /tmp/wireproof-run-12-34/file has the token
// /tmp/wireproof-run-12-34. A word of letters and digits both (the CLI's
// background task ids, bzjc3l8io) is an id too, and so is a number of four
// digits or more (a process id, the digits of a directory's name the CLI
// made a slug of); a word of letters alone is text, except after "ID: "
// (the CLI's "Command running in background with ID: bkvvjqois": its
// background task ids are random letters and digits, now and then letters
// alone) or where it is a value already bound (that id again, in a path or
// a task notification). An id is a Messages or Responses id (toolu_,
// msg_, call_, fc_, fco_, resp_, rs_ ..., its tail letters and digits or a
// UUID, as Codex's item ids are). The Codex CLI's outputs carry two more: a
// command's wall time ("Wall time: 0.1 seconds": the number, matched as
// any and bound to nothing) and its exec session ("Process running with
// session ID 3", and a write_stdin's "session_id":3 in its arguments: the
// number, bound like an id); a date alone (Codex's
// <current_date>) is one as well.
var tokenRE = regexp.MustCompile(strings.Join([]string{
	`(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})`,
	`(?P<port>(?:127\.0\.0\.1|localhost|\[::1\]):[0-9]+)`,
	`(?P<tmp>(?:/tmp|/var/tmp|/private/var/folders/[^/\s"']+/[^/\s"']+/T)(?:/[^/\s"'\\<>]*[0-9][^/\s"'\\<>]*)+)`,
	`(?P<time>[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2}))`,
	`(?P<date>\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b)`,
	`(?P<id>\b(?:toolu|msg|srvtoolu|req|call|fc|fco|resp|rs)_(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Za-z0-9]{8,}))`,
	`Wall time: (?P<wall>[0-9]+(?:\.[0-9]+)?) seconds`,
	`session ID (?P<session>[0-9]+)\b`,
	`"session_id":\s*(?P<sessionarg>[0-9]+)\b`,
	`(?P<word>\b[A-Za-z0-9]{4,}\b)`,
}, "|"))

// segment is a piece of a string: a literal, or a run-bound token of a class.
type segment struct {
	class string // "" for a literal
	text  string
}

// sessionKey starts the binding key of an exec session's number: the
// number alone ("3") is too common a string to replace in an answer; a
// function call's session_id argument is bound by it (SessionID).
const sessionKey = "session ID "

// key is the token's binding key: its text, "session ID 3" for a session,
// "" (never bound) for a literal or a wall time.
func (s segment) key() string {
	switch s.class {
	case "", "wall":
		return ""
	case "session":
		return sessionKey + s.text
	}
	return s.text
}

// SessionID is the live exec session bound to a recorded one (n itself
// when it is not bound).
func (b Bindings) SessionID(n string) string {
	if v, ok := b[sessionKey+n]; ok {
		return strings.TrimPrefix(v, sessionKey)
	}
	return n
}

// idIntro is what comes before a word that is an id even of letters alone.
const idIntro = "ID: "

// tokenize cuts s into literals and run-bound tokens; a word of letters
// alone is a token when known holds it or when it follows idIntro (and then
// is known for the rest of s).
func tokenize(s string, known map[string]bool) []segment {
	var out []segment
	var found map[string]bool // ids of letters alone found in s
	names := tokenRE.SubexpNames()
	last := 0
	for _, m := range tokenRE.FindAllStringSubmatchIndex(s, -1) {
		class := ""
		for g := 1; g < len(names); g++ {
			if m[2*g] >= 0 {
				class = names[g]
				break
			}
		}
		// The token is its group's text: "Wall time: " and "session ID "
		// around a number are literal.
		start, end := m[0], m[1]
		for g := 1; g < len(names); g++ {
			if names[g] == class {
				start, end = m[2*g], m[2*g+1]
				break
			}
		}
		text := s[start:end]
		if class == "sessionarg" {
			class = "session" // write_stdin's argument naming it
		}
		if class == "word" {
			class = wordClass(text)
			if class == "" && (known[text] || found[text] || strings.HasSuffix(s[:start], idIntro)) {
				class = "word"
				if found == nil {
					found = map[string]bool{}
				}
				found[text] = true
			}
		}
		if class == "" {
			continue // text: part of the literal around it
		}
		if start > last {
			out = append(out, segment{text: s[last:start]})
		}
		out = append(out, segment{class: class, text: text})
		last = end
	}
	if last < len(s) {
		out = append(out, segment{text: s[last:]})
	}
	return out
}

// sameClass reports whether tokens of classes a and b may stand for one
// another: the same class, or a number and a word of letters and digits (a
// random id, the exec tool's Chunk ID: 190737 one run and 7deced the next).
func sameClass(a, b string) bool {
	return a == b || (a == "num" || a == "word") && (b == "num" || b == "word")
}

// wordClass is a word's class: "num" for digits alone, "word" for letters
// and digits both, "" (text) for letters alone.
func wordClass(w string) string {
	digits, letters := false, false
	for _, r := range w {
		if r >= '0' && r <= '9' {
			digits = true
		} else {
			letters = true
		}
	}
	switch {
	case digits && letters:
		return "word"
	case digits:
		return "num"
	}
	return ""
}

// Shape is the part of a Messages request a cassette matches: the path
// (messages or count_tokens), whether it streams, the model, the tools'
// names and the messages (each content a list of blocks, cache_control
// left out). The system prompt, metadata (the CLI's device and session
// ids), max_tokens and the other settings are not matched.
//
// A Responses request (POST /v1/responses, the Codex CLI's) is matched the
// same way by its model, stream, its tools' names (a namespace's functions
// as namespace.name, a hosted tool by its type), its instructions and its
// input items whole (messages with their parts, function calls with their
// call ids, names and arguments, function call outputs), a string input
// being one user message; reasoning's encrypted_content, the skills the
// CLI lists (its <skills_instructions>, dropSkills), its prompt_cache_key
// and session headers are not matched.
type Shape struct {
	Path   string
	Stream bool
	Model  string
	list   string // "messages", or "input" for a Responses request
	value  any    // {"messages": [...], "tools": [...]} as generic JSON
}

// ResponsesPath is the Responses API's path.
const ResponsesPath = "/v1/responses"

// ParseShape reads a request body into its Shape: a Responses request at
// ResponsesPath, a Messages request at any other path.
func ParseShape(path string, body []byte) (*Shape, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("the request body is not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("the request body holds more than one JSON value")
	}
	if path == ResponsesPath {
		return parseResponses(path, top)
	}
	msgs, ok := top["messages"].([]any)
	if !ok {
		return nil, fmt.Errorf("the request has no messages array")
	}
	s := &Shape{Path: path, list: "messages"}
	s.Stream, _ = top["stream"].(bool)
	s.Model, _ = top["model"].(string)
	var names []any
	if tools, ok := top["tools"].([]any); ok {
		for _, t := range tools {
			if m, ok := t.(map[string]any); ok {
				names = append(names, m["name"])
			}
		}
	}
	norm := make([]any, len(msgs))
	for i, m := range msgs {
		norm[i] = normMessage(m)
	}
	s.value = map[string]any{"messages": norm, "tools": names}
	return s, nil
}

// parseResponses is ParseShape of a Responses request.
func parseResponses(path string, top map[string]any) (*Shape, error) {
	var input []any
	switch in := top["input"].(type) {
	case string:
		input = []any{map[string]any{"type": "message", "role": "user", "content": in}}
	case []any:
		input = in
	default:
		return nil, fmt.Errorf("the request has no input (a string or an array of items)")
	}
	s := &Shape{Path: path, list: "input"}
	s.Stream, _ = top["stream"].(bool)
	s.Model, _ = top["model"].(string)
	names := []any{}
	if tools, ok := top["tools"].([]any); ok {
		for _, t := range tools {
			names = append(names, toolNames(t)...)
		}
	}
	norm := make([]any, len(input))
	for i, it := range input {
		norm[i] = normItem(it)
	}
	v := map[string]any{"input": norm, "tools": names}
	if ins, ok := top["instructions"]; ok {
		v["instructions"] = ins
	}
	s.value = v
	return s, nil
}

// toolNames is a Responses tool's names: a function's name, a namespace's
// functions as namespace.name, a hosted tool's type.
func toolNames(t any) []any {
	m, ok := t.(map[string]any)
	if !ok {
		return []any{t}
	}
	typ, _ := m["type"].(string)
	name, _ := m["name"].(string)
	switch {
	case typ == "namespace":
		var out []any
		sub, _ := m["tools"].([]any)
		for _, f := range sub {
			fm, _ := f.(map[string]any)
			fn, _ := fm["name"].(string)
			out = append(out, name+"."+fn)
		}
		return out
	case name != "":
		return []any{name}
	}
	return []any{typ}
}

// normItem makes a message item's content a list of parts (a string being
// one input_text part) and drops what is opaque or moves between turns:
// reasoning's encrypted_content.
func normItem(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		switch k {
		case "encrypted_content":
			continue
		case "content":
			if str, ok := x.(string); ok {
				x = []any{map[string]any{"type": "input_text", "text": str}}
			}
			x = dropSkills(x)
		}
		out[k] = x
	}
	return out
}

// skillsIntro starts the Codex CLI's list of skills, a part of a
// developer message.
const skillsIntro = "<skills_instructions>"

// dropSkills leaves the <skills_instructions> parts out of content: the
// Codex CLI lists the skills it has unpacked into its home so far, in an
// order of its own, so the list is another one run to run, or not there
// yet.
func dropSkills(content any) any {
	parts, ok := content.([]any)
	if !ok {
		return content
	}
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok {
			if text, _ := m["text"].(string); strings.HasPrefix(text, skillsIntro) {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// normMessage makes a message's content a list of blocks and drops
// cache_control, which the CLI moves to the newest turn.
func normMessage(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		if k == "cache_control" {
			continue
		}
		if k == "content" {
			x = normContent(x)
		}
		out[k] = x
	}
	return out
}

func normContent(v any) any {
	switch c := v.(type) {
	case string:
		return []any{map[string]any{"type": "text", "text": c}}
	case []any:
		out := make([]any, len(c))
		for i, b := range c {
			out[i] = normMessage(b)
		}
		return out
	}
	return v
}

// Bindings maps a recorded run-bound value to this run's.
type Bindings map[string]string

// changes reports whether a recorded value is bound to another.
func (b Bindings) changes() bool {
	for k, v := range b {
		if k != v {
			return true
		}
	}
	return false
}

// Apply replaces every recorded value bound to another in s, the longest
// first so that one value inside another is not cut.
func (b Bindings) Apply(s string) string {
	if len(b) == 0 {
		return s
	}
	keys := slices.Collect(maps.Keys(b))
	slices.SortFunc(keys, func(x, y string) int {
		if len(x) != len(y) {
			return len(y) - len(x)
		}
		return strings.Compare(x, y)
	})
	var pairs []string
	for _, k := range keys {
		if b[k] != k {
			pairs = append(pairs, k, b[k])
		}
	}
	if len(pairs) == 0 {
		return s
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// Diff is where a live request first differs from a recorded one.
type Diff struct {
	// Path names the field: "messages[3].content[0].text", "model",
	// "tools[2]".
	Path string
	// Recorded and Live are the two values there, shown in one line ("" for
	// absent).
	Recorded, Live string
	// Count is how many places differ in all.
	Count int
	// Prefix is how many leading messages are equal: the nearest recorded
	// request is the one with the longest.
	Prefix int
}

func (d *Diff) String() string {
	if d == nil {
		return ""
	}
	var s string
	switch {
	case d.Recorded == "":
		s = fmt.Sprintf("%s: not recorded, the client sent %s", d.Path, d.Live)
	case d.Live == "":
		s = fmt.Sprintf("%s: recorded %s, the client sent none", d.Path, d.Recorded)
	default:
		s = fmt.Sprintf("%s: recorded %s, the client sent %s", d.Path, d.Recorded, d.Live)
	}
	if n := d.Count - 1; n == 1 {
		s += " (and 1 more difference)"
	} else if n > 1 {
		s += fmt.Sprintf(" (and %d more differences)", n)
	}
	return s
}

// Match compares a live request with a recorded one. It returns the
// bindings of the recorded run-bound values to the live ones when they
// match, else the first difference (nil bindings).
func Match(rec, live *Shape) (Bindings, *Diff) {
	m := &matcher{bind: Bindings{}}
	if rec.Path != live.Path {
		m.differ("path", show(rec.Path), show(live.Path))
	}
	if rec.Stream != live.Stream {
		m.differ("stream", fmt.Sprint(rec.Stream), fmt.Sprint(live.Stream))
	}
	if rec.Model != live.Model {
		m.differ("model", show(rec.Model), show(live.Model))
	}
	rv, _ := rec.value.(map[string]any)
	lv, _ := live.value.(map[string]any)
	m.walk("tools", rv["tools"], lv["tools"])
	ri, rok := rv["instructions"]
	li, lok := lv["instructions"]
	if rok || lok {
		m.pair("instructions", ri, rok, li, lok)
	}
	list := rec.list
	if list == "" {
		list = "messages"
	}
	rm, _ := rv[list].([]any)
	lm, _ := lv[list].([]any)
	prefix := -1
	for i := range max(len(rm), len(lm)) {
		before := m.count
		var rv, lv any
		if i < len(rm) {
			rv = rm[i]
		}
		if i < len(lm) {
			lv = lm[i]
		}
		m.pair(fmt.Sprintf("%s[%d]", list, i), rv, i < len(rm), lv, i < len(lm))
		if m.count > before && prefix < 0 {
			prefix = i
		}
	}
	if prefix < 0 {
		prefix = min(len(rm), len(lm))
	}
	if m.first != nil {
		m.first.Count, m.first.Prefix = m.count, prefix
		return nil, m.first
	}
	return m.bind, nil
}

type matcher struct {
	bind  Bindings
	first *Diff
	count int
}

func (m *matcher) differ(path, rec, live string) {
	m.count++
	if m.first == nil {
		m.first = &Diff{Path: path, Recorded: rec, Live: live}
	}
}

// pair compares the values at one place, either of them absent.
func (m *matcher) pair(path string, rec any, hasRec bool, live any, hasLive bool) {
	switch {
	case !hasRec:
		m.differ(path, "", show(live))
	case !hasLive:
		m.differ(path, show(rec), "")
	default:
		m.walk(path, rec, live)
	}
}

// walk compares two JSON values: objects by sorted key, arrays in order,
// strings token by token.
func (m *matcher) walk(path string, rec, live any) {
	switch r := rec.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			break
		}
		union := maps.Clone(l)
		maps.Copy(union, r)
		for _, k := range slices.Sorted(maps.Keys(union)) {
			rv, rok := r[k]
			lv, lok := l[k]
			m.pair(join(path, k), rv, rok, lv, lok)
		}
		return
	case []any:
		l, ok := live.([]any)
		if !ok {
			break
		}
		for i := range max(len(r), len(l)) {
			var rv, lv any
			if i < len(r) {
				rv = r[i]
			}
			if i < len(l) {
				lv = l[i]
			}
			m.pair(fmt.Sprintf("%s[%d]", path, i), rv, i < len(r), lv, i < len(l))
		}
		return
	case string:
		l, ok := live.(string)
		if !ok {
			break
		}
		if !m.strings(r, l) {
			i, j := m.firstDiffering(r, l)
			m.differ(path, showFrom(r, i), showFrom(l, j))
		}
		return
	case nil:
		if live == nil {
			return
		}
	default:
		if scalarEqual(rec, live) {
			return
		}
	}
	m.differ(path, show(rec), show(live))
}

// strings compares two strings with their run-bound tokens set apart,
// binding each recorded token to the live one at its place (a token bound
// once must be bound to the same value everywhere).
func (m *matcher) strings(rec, live string) bool {
	if rec == live {
		for _, s := range tokenize(rec, m.recorded()) {
			if k := s.key(); k != "" {
				if _, ok := m.bind[k]; !ok {
					m.bind[k] = k
				}
			}
		}
		return true
	}
	if strings.Contains(rec, Redacted) && !strings.Contains(live, Redacted) {
		return m.redacted(rec, live)
	}
	rs, ls := tokenize(rec, m.recorded()), tokenize(live, m.live())
	if len(rs) != len(ls) {
		return false
	}
	pending := map[string]string{}
	for i := range rs {
		r, l := rs[i], ls[i]
		if !sameClass(r.class, l.class) {
			return false
		}
		if r.class == "" {
			if r.text != l.text {
				return false
			}
			continue
		}
		if r.class == "port" && hostOf(r.text) != hostOf(l.text) {
			return false
		}
		rk, lk := r.key(), l.key()
		if rk == "" {
			continue // a wall time: any, bound to nothing
		}
		if b, ok := m.bind[rk]; ok && b != lk {
			return false
		}
		if b, ok := pending[rk]; ok && b != lk {
			return false
		}
		pending[rk] = lk
	}
	maps.Copy(m.bind, pending)
	return true
}

// recorded is the recorded values bound so far, live the live ones: the
// words tokenize sets apart even when of letters alone.
func (m *matcher) recorded() map[string]bool {
	k := make(map[string]bool, len(m.bind))
	for r := range m.bind {
		k[r] = true
	}
	return k
}

func (m *matcher) live() map[string]bool {
	k := make(map[string]bool, len(m.bind))
	for _, l := range m.bind {
		k[l] = true
	}
	return k
}

// Redacted is what the recorder wrote in place of a secret.
const Redacted = "[REDACTED]"

// redacted matches a recorded string that holds a redacted secret with a
// live one: the recorded string is a pattern in which each [REDACTED] and
// each run-bound token stands for any text, the rest literal. The secret
// the live string has in its place is bound to [REDACTED] (the first one
// seen, when a request carries several), so that a recorded answer that
// repeated it repeats this run's; tokens bind as elsewhere.
func (m *matcher) redacted(rec, live string) bool {
	var pat strings.Builder
	var holes []string // what each group stands for
	pat.WriteString("^")
	for k, part := range strings.Split(rec, Redacted) {
		if k > 0 {
			pat.WriteString("(.+?)")
			holes = append(holes, Redacted)
		}
		for _, s := range tokenize(part, m.recorded()) {
			if s.class == "" {
				pat.WriteString(regexp.QuoteMeta(s.text))
				continue
			}
			pat.WriteString("(.+?)")
			holes = append(holes, s.key())
		}
	}
	pat.WriteString("$")
	re, err := regexp.Compile(pat.String())
	if err != nil {
		return false
	}
	got := re.FindStringSubmatch(live)
	if got == nil {
		return false
	}
	pending := map[string]string{}
	for i, h := range holes {
		v := got[i+1]
		switch {
		case h == "":
			continue // a wall time
		case strings.HasPrefix(h, sessionKey):
			v = sessionKey + v
		}
		if h == Redacted {
			if _, ok := m.bind[h]; !ok {
				pending[h] = v
			}
			continue
		}
		if b, ok := m.bind[h]; ok && b != v {
			return false
		}
		if b, ok := pending[h]; ok && b != v {
			return false
		}
		pending[h] = v
	}
	for k, v := range pending {
		if _, ok := m.bind[k]; !ok {
			m.bind[k] = v
		}
	}
	return true
}

func hostOf(hostport string) string {
	i := strings.LastIndexByte(hostport, ':')
	return hostport[:i]
}

func scalarEqual(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		return an == bn
	}
	return a == b
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// firstDiffering is where two strings that do not match first differ:
// the byte offsets in each of their first literal that is not equal, or
// the first token of another class (0, 0 when that is not found, a
// binding being what differs).
func (m *matcher) firstDiffering(rec, live string) (int, int) {
	rs, ls := tokenize(rec, m.recorded()), tokenize(live, m.live())
	ri, li := 0, 0
	for k := range min(len(rs), len(ls)) {
		r, l := rs[k], ls[k]
		if !sameClass(r.class, l.class) {
			return ri, li
		}
		if r.class == "" && r.text != l.text {
			n := 0
			for n < len(r.text) && n < len(l.text) && r.text[n] == l.text[n] {
				n++
			}
			return ri + n, li + n
		}
		ri, li = ri+len(r.text), li+len(l.text)
	}
	if len(rs) != len(ls) {
		return ri, li
	}
	return 0, 0
}

// diffContext is how many bytes before the first difference a long
// string is shown from.
const diffContext = 40

// showFrom is a string in one line as show has it, from a little before
// byte at when that is far in ("..." marking what is left out).
func showFrom(s string, at int) string {
	if at <= diffContext || len(fmt.Sprintf("%q", s)) <= 120 {
		return show(s)
	}
	start := at - diffContext
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return "..." + show(s[start:])
}

// show is a value in one line, cut to 120 bytes.
func show(v any) string {
	var s string
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:120], "") + "..."
	}
	return s
}
