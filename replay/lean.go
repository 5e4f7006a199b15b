package replay

// The lean decoders read RPC messages and projections in one strict pass
// without reflection, keep only what the checks read and copy nothing they do
// not keep. Each one either produces exactly what encoding/json would for the
// fields it fills, or reports that it cannot, and the caller decodes with
// encoding/json as before: verdicts and decode errors never depend on which
// path ran. lean_test.go checks the equivalence, by table and by fuzzing.

import (
	"encoding/json"

	"github.com/wireproof/wireproof/t3"
)

// leanDecoder holds the intern table of one stream and the projections it
// decoded last. Not safe for concurrent use.
type leanDecoder struct {
	intern internTable
	memo   projectionMemo

	// Scratch slices of leanSlice, one per element type (arrays of one type
	// do not nest in a projection).
	runs            []t3.Run
	subagents       []t3.Subagent
	messages        []t3.Message
	turnItems       []t3.TurnItem
	providerThreads []t3.ProviderThread
}

func newLeanDecoder() *leanDecoder { return &leanDecoder{intern: internTable{}} }

// message decodes one RPC message object into w. Its raw fields (ids,
// payload, values, exit value and cause, defect, params, result, error) alias
// b, where encoding/json would copy them.
func (d *leanDecoder) message(b []byte, w *wireMessage) bool {
	s := newScanner(b)
	var seen keys
	ok := s.object(0, func(key []byte) bool {
		switch string(key) {
		case "_tag":
			return seen.first(0) && s.text(&w.Tag, d.intern)
		case "id":
			return seen.first(1) && s.rawInto((*[]byte)(&w.ID), 1)
		case "tag":
			return seen.first(2) && s.text(&w.RPCTag, d.intern)
		case "payload":
			return seen.first(3) && s.rawInto((*[]byte)(&w.Payload), 1)
		case "requestId":
			return seen.first(4) && s.rawInto((*[]byte)(&w.RequestID), 1)
		case "values":
			return seen.first(5) && s.rawInto((*[]byte)(&w.Values), 1)
		case "exit":
			return seen.first(6) && d.exit(&s, &w.Exit)
		case "defect":
			return seen.first(7) && s.rawInto((*[]byte)(&w.Defect), 1)
		case "jsonrpc":
			return seen.first(8) && s.text(&w.JSONRPC, d.intern)
		case "method":
			return seen.first(9) && s.text(&w.Method, d.intern)
		case "params":
			return seen.first(10) && s.rawInto((*[]byte)(&w.Params), 1)
		case "chunk":
			return seen.first(11) && s.boolean(&w.Chunk)
		case "result":
			return seen.first(12) && s.rawInto((*[]byte)(&w.Result), 1)
		case "error":
			return seen.first(13) && s.rawInto((*[]byte)(&w.Error), 1)
		}
		return s.skipUnknown(1, key, "_tag", "id", "tag", "payload", "requestId", "values", "exit", "defect",
			"jsonrpc", "method", "params", "chunk", "result", "error")
	})
	return ok && s.End()
}

// exit decodes an Exit's exit object. Its value is only validated here: the
// engine decodes it if a check reads it.
func (d *leanDecoder) exit(s *scanner, dst **t3.Exit) bool {
	if s.Null() {
		return true
	}
	x := &t3.Exit{}
	var seen keys
	ok := s.object(1, func(key []byte) bool {
		switch string(key) {
		case "_tag":
			return seen.first(0) && s.text(&x.Tag, d.intern)
		case "value":
			return seen.first(1) && d.exitValue(s, (*[]byte)(&x.Value))
		case "cause":
			return seen.first(2) && s.rawInto((*[]byte)(&x.Cause), 2)
		}
		return s.skipUnknown(2, key, "_tag", "value", "cause")
	})
	*dst = x
	return ok
}

// exitValue scans an Exit's value (at depth 2) into *dst. A value the memo
// holds, byte for byte, was validated when it was decoded (at the same
// depth, memoDepth) and a JSON object or array ends at its own closing
// bracket, so it is taken by a memcmp instead of scanned again: a long run
// answers the same projection over and over.
func (d *leanDecoder) exitValue(s *scanner, dst *[]byte) bool {
	s.Space()
	if n := d.memo.prefix(s.Rest()); n > 0 {
		start := s.Pos()
		s.Seek(start + n)
		*dst = s.Since(start)
		return true
	}
	return s.rawInto(dst, 2)
}

// threadID reads payload.threadId of a request, as decoding the payload into
// struct{ThreadID string `json:"threadId"`} does.
func (d *leanDecoder) threadID(payload []byte) (string, bool) {
	s := newScanner(payload)
	var id string
	if s.Null() {
		return "", s.End()
	}
	var seen keys
	ok := s.object(0, func(key []byte) bool {
		if string(key) == "threadId" {
			return seen.first(0) && s.text(&id, d.intern)
		}
		return s.skipUnknown(1, key, "threadId")
	})
	return id, ok && s.End()
}

// getProjection decodes a getThreadProjection answer: the projection itself.
func (d *leanDecoder) getProjection(value []byte) (*t3.Projection, bool) {
	return d.memo.decode(memoGetProjection, value, d.getProjectionOnce)
}

func (d *leanDecoder) getProjectionOnce(value []byte) (*t3.Projection, bool) {
	s := newScanner(value)
	if s.Peek() != '{' {
		return nil, false
	}
	p := &t3.Projection{}
	return p, d.projection(&s, p, memoDepth) && s.End()
}

// launchAnswer decodes a launchThread answer {threadId, projection}.
func (d *leanDecoder) launchAnswer(value []byte) (*t3.Projection, bool) {
	return d.memo.decode(memoLaunch, value, d.launchAnswerOnce)
}

func (d *leanDecoder) launchAnswerOnce(value []byte) (*t3.Projection, bool) {
	s := newScanner(value)
	p, ok := d.launch(&s, memoDepth)
	return p, ok && s.End()
}

func (d *leanDecoder) launch(s *scanner, depth int) (*t3.Projection, bool) {
	var p *t3.Projection
	var threadID string
	var seen keys
	ok := s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "threadId":
			return seen.first(0) && s.text(&threadID, d.intern)
		case "projection":
			return seen.first(1) && d.projectionPtr(s, &p, depth+1)
		}
		return s.skipUnknown(depth+1, key, "threadId", "projection")
	})
	return p, ok
}

// threadRead decodes the body of an HTTP thread read {projection}.
func (d *leanDecoder) threadRead(body []byte) (*t3.Projection, bool) {
	return d.memo.decode(memoThreadRead, body, d.threadReadOnce)
}

func (d *leanDecoder) threadReadOnce(body []byte) (*t3.Projection, bool) {
	s := newScanner(body)
	var p *t3.Projection
	var seen keys
	ok := s.object(memoDepth, func(key []byte) bool {
		if string(key) == "projection" {
			return seen.first(0) && d.projectionPtr(&s, &p, memoDepth+1)
		}
		return s.skipUnknown(memoDepth+1, key, "projection")
	})
	return p, ok && s.End()
}

// snapshots decodes the values of a subscribeThread chunk, an array of
// {kind, projection}, and returns the projections of its snapshot items in order.
func (d *leanDecoder) snapshots(values []byte) ([]*t3.Projection, bool) {
	s := newScanner(values)
	if s.Null() {
		return nil, s.End()
	}
	var out []*t3.Projection
	ok := s.Array(0, func() bool {
		if s.Null() {
			return true // a zero item: no snapshot
		}
		var kind string
		var p *t3.Projection
		var seen keys
		ok := s.object(1, func(key []byte) bool {
			switch string(key) {
			case "kind":
				return seen.first(0) && s.text(&kind, d.intern)
			case "projection":
				return seen.first(1) && d.projectionPtr(&s, &p, 2)
			}
			return s.skipUnknown(2, key, "kind", "projection")
		})
		if ok && kind == t3.ItemKindSnapshot && p != nil {
			out = append(out, p)
		}
		return ok
	})
	return out, ok && s.End()
}

func (d *leanDecoder) projectionPtr(s *scanner, dst **t3.Projection, depth int) bool {
	if s.Null() {
		*dst = nil
		return true
	}
	p := &t3.Projection{}
	*dst = p
	return d.projection(s, p, depth)
}

// projection decodes the fields of t3.Projection the checks read. Fields no
// check reads are checked for their type, as encoding/json would, but not
// kept: Thread, UpdatedAt and every TurnItem field but Type (the text of
// command output is the bulk of a projection).
func (d *leanDecoder) projection(s *scanner, p *t3.Projection, depth int) bool {
	var seen keys
	return s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "thread":
			return seen.first(0) && s.Skip(depth+1)
		case "runs":
			return seen.first(1) && leanSlice(s, &p.Runs, depth+1, &d.runs, func(r *t3.Run) bool { return d.run(s, r, depth+2) })
		case "subagents":
			return seen.first(2) && leanSlice(s, &p.Subagents, depth+1, &d.subagents, func(a *t3.Subagent) bool { return d.subagent(s, a, depth+2) })
		case "messages":
			return seen.first(3) && leanSlice(s, &p.Messages, depth+1, &d.messages, func(m *t3.Message) bool { return d.chatMessage(s, m, depth+2) })
		case "turnItems":
			return seen.first(4) && leanSlice(s, &p.TurnItems, depth+1, &d.turnItems, func(it *t3.TurnItem) bool { return d.turnItem(s, it, depth+2) })
		case "providerThreads":
			return seen.first(5) && leanSlice(s, &p.ProviderThreads, depth+1, &d.providerThreads, func(pt *t3.ProviderThread) bool { return d.providerThread(s, pt, depth+2) })
		case "updatedAt":
			return seen.first(6) && s.skipText()
		}
		return s.skipUnknown(depth+1, key, "thread", "runs", "subagents", "messages", "turnItems", "providerThreads", "updatedAt")
	})
}

// leanSlice decodes a JSON array into a slice field: null leaves it nil, []
// makes it empty, a null element is a zero element, as with encoding/json.
// Elements are decoded into *scratch (reused) and copied out at the exact
// length, so a long array is not regrown element by element.
func leanSlice[T any](s *scanner, dst *[]T, depth int, scratch *[]T, elem func(*T) bool) bool {
	if s.Null() {
		*dst = nil
		return true
	}
	buf := (*scratch)[:0]
	ok := s.Array(depth, func() bool {
		buf = append(buf, *new(T))
		if s.Null() {
			return true
		}
		return elem(&buf[len(buf)-1])
	})
	*dst = append(make([]T, 0, len(buf)), buf...)
	clear(buf) // keep no strings alive through the scratch
	*scratch = buf
	return ok
}

func (d *leanDecoder) run(s *scanner, r *t3.Run, depth int) bool {
	var seen keys
	return s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && s.text(&r.ID, d.intern)
		case "ordinal":
			return seen.first(1) && s.integer(&r.Ordinal)
		case "status":
			return seen.first(2) && s.text(&r.Status, d.intern)
		}
		return s.skipUnknown(depth+1, key, "id", "ordinal", "status")
	})
}

func (d *leanDecoder) subagent(s *scanner, a *t3.Subagent, depth int) bool {
	var seen keys
	return s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && s.text(&a.ID, d.intern)
		case "origin":
			return seen.first(1) && s.text(&a.Origin, d.intern)
		case "childThreadId":
			return seen.first(2) && s.text(&a.ChildThreadID, d.intern)
		case "status":
			return seen.first(3) && s.text(&a.Status, d.intern)
		case "result":
			if !seen.first(4) {
				return false
			}
			if s.Null() {
				a.Result = nil
				return true
			}
			var r string
			a.Result = &r
			return s.text(&r, nil)
		case "completionDelivery":
			if !seen.first(5) {
				return false
			}
			if s.Null() {
				a.CompletionDelivery = nil
				return true
			}
			cd := &t3.CompletionDelivery{}
			a.CompletionDelivery = cd
			var cseen keys
			return s.object(depth+1, func(key []byte) bool {
				switch string(key) {
				case "state":
					return cseen.first(0) && s.text(&cd.State, d.intern)
				case "observedByRunId":
					return cseen.first(1) && s.text(&cd.ObservedByRunID, d.intern)
				}
				return s.skipUnknown(depth+2, key, "state", "observedByRunId")
			})
		}
		return s.skipUnknown(depth+1, key, "id", "origin", "childThreadId", "status", "result", "completionDelivery")
	})
}

func (d *leanDecoder) chatMessage(s *scanner, m *t3.Message, depth int) bool {
	var seen keys
	return s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && s.text(&m.ID, d.intern)
		case "runId":
			return seen.first(1) && s.text(&m.RunID, d.intern)
		case "role":
			return seen.first(2) && s.text(&m.Role, d.intern)
		case "text":
			return seen.first(3) && s.text(&m.Text, nil)
		}
		return s.skipUnknown(depth+1, key, "id", "runId", "role", "text")
	})
}

// turnItem keeps only Type: the checks count items by type and read nothing else.
func (d *leanDecoder) turnItem(s *scanner, it *t3.TurnItem, depth int) bool {
	var seen keys
	return s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "type":
			return seen.first(0) && s.text(&it.Type, d.intern)
		case "id":
			return seen.first(1) && s.skipText()
		case "runId":
			return seen.first(2) && s.skipText()
		case "source":
			return seen.first(3) && s.skipText()
		case "outcome":
			return seen.first(4) && s.skipText()
		case "summary":
			return seen.first(5) && s.skipText()
		case "text":
			return seen.first(6) && s.skipText()
		}
		return s.skipUnknown(depth+1, key, "type", "id", "runId", "source", "outcome", "summary", "text")
	})
}

func (d *leanDecoder) providerThread(s *scanner, pt *t3.ProviderThread, depth int) bool {
	var seen keys
	return s.object(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && s.text(&pt.ID, d.intern)
		case "pendingBackgroundTasks":
			if !seen.first(1) {
				return false
			}
			if s.Null() {
				pt.PendingBackgroundTasks = nil
				return true
			}
			tasks := []json.RawMessage{}
			ok := s.Array(depth+1, func() bool {
				v, ok := s.Raw(depth + 2)
				tasks = append(tasks, append([]byte(nil), v...)) // kept past the event: copied
				return ok
			})
			pt.PendingBackgroundTasks = tasks
			return ok
		}
		return s.skipUnknown(depth+1, key, "id", "pendingBackgroundTasks")
	})
}
