package delivery

// The lean decoders read projections in one strict pass without reflection,
// keep only what the checks read and copy nothing they do not keep (the
// Effect RPC messages around them are read the same way, by
// protocol/effectrpc's decoder). Each one either produces exactly what encoding/json would for the
// fields it fills, or reports that it cannot, and the caller decodes with
// encoding/json as before: verdicts and decode errors never depend on which
// path ran. lean_test.go checks the equivalence, by table and by fuzzing.

import (
	"encoding/json"

	"github.com/wireproof/wireproof/internal/jsonscan"
	"github.com/wireproof/wireproof/t3"
)

// leanDecoder holds the intern table of one stream and the projections it
// decoded last. Not safe for concurrent use.
type leanDecoder struct {
	intern jsonscan.Intern
	memo   projectionMemo

	// Scratch slices of leanSlice, one per element type (arrays of one type
	// do not nest in a projection).
	runs            []t3.Run
	subagents       []t3.Subagent
	messages        []t3.Message
	turnItems       []t3.TurnItem
	providerThreads []t3.ProviderThread
}

func newLeanDecoder() *leanDecoder { return &leanDecoder{intern: jsonscan.Intern{}} }

// getProjection decodes a getThreadProjection answer: the projection itself.
func (d *leanDecoder) getProjection(value []byte) (*t3.Projection, bool) {
	return d.memo.decode(memoGetProjection, value, d.getProjectionOnce)
}

func (d *leanDecoder) getProjectionOnce(value []byte) (*t3.Projection, bool) {
	s := jsonscan.NewReader(value)
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
	s := jsonscan.NewReader(value)
	p, ok := d.launch(&s, memoDepth)
	return p, ok && s.End()
}

func (d *leanDecoder) launch(s *jsonscan.Reader, depth int) (*t3.Projection, bool) {
	var p *t3.Projection
	var threadID string
	var seen jsonscan.Keys
	ok := s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "threadId":
			return seen.First(0) && s.Text(&threadID, d.intern)
		case "projection":
			return seen.First(1) && d.projectionPtr(s, &p, depth+1)
		}
		return s.SkipUnknown(depth+1, key, "threadId", "projection")
	})
	return p, ok
}

// threadRead decodes the body of an HTTP thread read {projection}.
func (d *leanDecoder) threadRead(body []byte) (*t3.Projection, bool) {
	return d.memo.decode(memoThreadRead, body, d.threadReadOnce)
}

func (d *leanDecoder) threadReadOnce(body []byte) (*t3.Projection, bool) {
	s := jsonscan.NewReader(body)
	var p *t3.Projection
	var seen jsonscan.Keys
	ok := s.Fields(memoDepth, func(key []byte) bool {
		if string(key) == "projection" {
			return seen.First(0) && d.projectionPtr(&s, &p, memoDepth+1)
		}
		return s.SkipUnknown(memoDepth+1, key, "projection")
	})
	return p, ok && s.End()
}

// snapshots decodes the values of a subscribeThread chunk, an array of
// {kind, projection}, and returns the projections of its snapshot items in order.
func (d *leanDecoder) snapshots(values []byte) ([]*t3.Projection, bool) {
	s := jsonscan.NewReader(values)
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
		var seen jsonscan.Keys
		ok := s.Fields(1, func(key []byte) bool {
			switch string(key) {
			case "kind":
				return seen.First(0) && s.Text(&kind, d.intern)
			case "projection":
				return seen.First(1) && d.projectionPtr(&s, &p, 2)
			}
			return s.SkipUnknown(2, key, "kind", "projection")
		})
		if ok && kind == t3.ItemKindSnapshot && p != nil {
			out = append(out, p)
		}
		return ok
	})
	return out, ok && s.End()
}

func (d *leanDecoder) projectionPtr(s *jsonscan.Reader, dst **t3.Projection, depth int) bool {
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
func (d *leanDecoder) projection(s *jsonscan.Reader, p *t3.Projection, depth int) bool {
	var seen jsonscan.Keys
	return s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "thread":
			return seen.First(0) && s.Skip(depth+1)
		case "runs":
			return seen.First(1) && leanSlice(s, &p.Runs, depth+1, &d.runs, func(r *t3.Run) bool { return d.run(s, r, depth+2) })
		case "subagents":
			return seen.First(2) && leanSlice(s, &p.Subagents, depth+1, &d.subagents, func(a *t3.Subagent) bool { return d.subagent(s, a, depth+2) })
		case "messages":
			return seen.First(3) && leanSlice(s, &p.Messages, depth+1, &d.messages, func(m *t3.Message) bool { return d.chatMessage(s, m, depth+2) })
		case "turnItems":
			return seen.First(4) && leanSlice(s, &p.TurnItems, depth+1, &d.turnItems, func(it *t3.TurnItem) bool { return d.turnItem(s, it, depth+2) })
		case "providerThreads":
			return seen.First(5) && leanSlice(s, &p.ProviderThreads, depth+1, &d.providerThreads, func(pt *t3.ProviderThread) bool { return d.providerThread(s, pt, depth+2) })
		case "updatedAt":
			return seen.First(6) && s.SkipText()
		}
		return s.SkipUnknown(depth+1, key, "thread", "runs", "subagents", "messages", "turnItems", "providerThreads", "updatedAt")
	})
}

// leanSlice decodes a JSON array into a slice field: null leaves it nil, []
// makes it empty, a null element is a zero element, as with encoding/json.
// Elements are decoded into *scratch (reused) and copied out at the exact
// length, so a long array is not regrown element by element.
func leanSlice[T any](s *jsonscan.Reader, dst *[]T, depth int, scratch *[]T, elem func(*T) bool) bool {
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

func (d *leanDecoder) run(s *jsonscan.Reader, r *t3.Run, depth int) bool {
	var seen jsonscan.Keys
	return s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.First(0) && s.Text(&r.ID, d.intern)
		case "ordinal":
			return seen.First(1) && s.Int(&r.Ordinal)
		case "status":
			return seen.First(2) && s.Text(&r.Status, d.intern)
		}
		return s.SkipUnknown(depth+1, key, "id", "ordinal", "status")
	})
}

func (d *leanDecoder) subagent(s *jsonscan.Reader, a *t3.Subagent, depth int) bool {
	var seen jsonscan.Keys
	return s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.First(0) && s.Text(&a.ID, d.intern)
		case "origin":
			return seen.First(1) && s.Text(&a.Origin, d.intern)
		case "childThreadId":
			return seen.First(2) && s.Text(&a.ChildThreadID, d.intern)
		case "status":
			return seen.First(3) && s.Text(&a.Status, d.intern)
		case "result":
			if !seen.First(4) {
				return false
			}
			if s.Null() {
				a.Result = nil
				return true
			}
			var r string
			a.Result = &r
			return s.Text(&r, nil)
		case "completionDelivery":
			if !seen.First(5) {
				return false
			}
			if s.Null() {
				a.CompletionDelivery = nil
				return true
			}
			cd := &t3.CompletionDelivery{}
			a.CompletionDelivery = cd
			var cseen jsonscan.Keys
			return s.Fields(depth+1, func(key []byte) bool {
				switch string(key) {
				case "state":
					return cseen.First(0) && s.Text(&cd.State, d.intern)
				case "observedByRunId":
					return cseen.First(1) && s.Text(&cd.ObservedByRunID, d.intern)
				}
				return s.SkipUnknown(depth+2, key, "state", "observedByRunId")
			})
		}
		return s.SkipUnknown(depth+1, key, "id", "origin", "childThreadId", "status", "result", "completionDelivery")
	})
}

func (d *leanDecoder) chatMessage(s *jsonscan.Reader, m *t3.Message, depth int) bool {
	var seen jsonscan.Keys
	return s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.First(0) && s.Text(&m.ID, d.intern)
		case "runId":
			return seen.First(1) && s.Text(&m.RunID, d.intern)
		case "role":
			return seen.First(2) && s.Text(&m.Role, d.intern)
		case "text":
			return seen.First(3) && s.Text(&m.Text, nil)
		}
		return s.SkipUnknown(depth+1, key, "id", "runId", "role", "text")
	})
}

// turnItem keeps only Type: the checks count items by type and read nothing else.
func (d *leanDecoder) turnItem(s *jsonscan.Reader, it *t3.TurnItem, depth int) bool {
	var seen jsonscan.Keys
	return s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "type":
			return seen.First(0) && s.Text(&it.Type, d.intern)
		case "id":
			return seen.First(1) && s.SkipText()
		case "runId":
			return seen.First(2) && s.SkipText()
		case "source":
			return seen.First(3) && s.SkipText()
		case "outcome":
			return seen.First(4) && s.SkipText()
		case "summary":
			return seen.First(5) && s.SkipText()
		case "text":
			return seen.First(6) && s.SkipText()
		}
		return s.SkipUnknown(depth+1, key, "type", "id", "runId", "source", "outcome", "summary", "text")
	})
}

func (d *leanDecoder) providerThread(s *jsonscan.Reader, pt *t3.ProviderThread, depth int) bool {
	var seen jsonscan.Keys
	return s.Fields(depth, func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.First(0) && s.Text(&pt.ID, d.intern)
		case "pendingBackgroundTasks":
			if !seen.First(1) {
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
		return s.SkipUnknown(depth+1, key, "id", "pendingBackgroundTasks")
	})
}
