package bundle

import (
	"errors"
	"fmt"
	"sync"
)

// Encoded is an event encoded ahead of its place in the bundle: every byte of
// its line but seq and t. Encoding (the payload's JSON check, escaping,
// base64) is most of the cost of appending, and it needs no lock, so
// concurrent producers do it in parallel with Encode and hold the Writer's
// lock only for Writer.AppendEncoded, which numbers the line and copies it.
type Encoded struct {
	ev   *Event
	tail []byte // from `,"kind":` to the closing brace
	// A JSON payload of copyBody bytes or more is not copied into the line:
	// tail then ends before it, body is the payload itself and post the
	// rest of the line. Up to bigLine the Writer copies body into its batch
	// (inline: the payload is copied once, not into tail and then the
	// batch); a huge one goes to the compressor as it is.
	body, post []byte
	inline     bool
}

// copyBody is the smallest JSON payload Encode leaves out of the line for
// the Writer to copy into its batch: below it the second copy costs less
// than the split (a 1 KiB WebSocket message is copied into the line).
const copyBody = 4 << 10

var encodedPool = sync.Pool{New: func() any { return new(Encoded) }}

// Encode checks ev and encodes it for Writer.AppendEncoded. ev.Kind must be
// set and must not be header or trailer; ev.Attrs, if set, must be one JSON
// value without line breaks. ev must not change until it is appended: the
// line is what ev was at Encode, and a JSON payload of 4 KiB or more is
// copied from ev's Body at the append, into the Writer's batch, rather than
// twice. One larger than 1 MiB is not copied at all (a 64 MiB message would
// be held twice): its bytes must not change until the Writer has written
// them, that is until a Flush after the append returns (or Close).
func Encode(ev *Event) (*Encoded, error) {
	if err := checkAppendable(ev); err != nil {
		return nil, err
	}
	e := encodeTail(ev)
	e.ev = ev
	return e, nil
}

// checkAppendable returns an error naming what makes ev unfit for Append.
func checkAppendable(ev *Event) error {
	switch ev.Kind {
	case "":
		return errors.New("bundle: append: event has no kind")
	case KindHeader, KindTrailer:
		return fmt.Errorf("bundle: append: kind %q is written by the Writer itself", ev.Kind)
	}
	if !validAttrs(ev.Attrs) {
		return fmt.Errorf("bundle: append: %s event attrs are not one JSON value on one line", ev.Kind)
	}
	return nil
}

// encodeTail encodes ev without checking it or keeping a pointer to it, so
// that Writer.Append does not make its argument escape to the heap.
func encodeTail(ev *Event) *Encoded {
	e := encodedPool.Get().(*Encoded)
	n := len(ev.Body.Data)
	if n < copyBody {
		e.tail = appendEventTail(e.tail[:0], ev)
		return e
	}
	// The payload's key is decided once: a large text body is not checked
	// again for UTF-8 and JSON by appendPayload.
	enc := payloadEncoding(ev.Body)
	if enc != EncodingJSON {
		e.tail = appendEventEnd(appendPayloadAs(appendEventHead(e.tail[:0], ev), ev.Body, enc), ev)
		return e
	}
	e.tail = append(appendEventHead(e.tail[:0], ev), `,"json":`...)
	e.body, e.inline = ev.Body.Data, n <= bigLine
	e.post = appendEventEnd(appendBinaryFlag(e.post[:0], ev.Body), ev)
	return e
}

// Release returns e's buffer for reuse by a later Encode. Use it only for an
// Encoded that will not be appended; AppendEncoded releases its argument.
func (e *Encoded) Release() {
	e.ev, e.body, e.inline = nil, nil, false
	if cap(e.tail) > 1<<20 {
		e.tail = nil // do not pin the buffer of one huge message
	}
	encodedPool.Put(e)
}
