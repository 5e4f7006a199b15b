package bundle

import (
	"context"
	"errors"
	"io"
	"iter"
)

// All returns an iterator over the events after the header, for a range
// loop:
//
//	for ev, err := range r.All() {
//		if err != nil {
//			return err // a *FormatError or an I/O error; the loop ends
//		}
//		use(ev)
//	}
//
// The iteration ends without an error at the trailer or, for a bundle cut
// short (a killed recorder), after its last complete line: then Truncated
// and TruncatedReason say so. Any other error is yielded once, with a nil
// event, and ends the iteration. The event yielded is reused: like Next's,
// its Body.Data and Attrs are valid only until the loop goes on (see
// Event.Detach).
func (r *Reader) All() iter.Seq2[*Event, error] {
	return r.Events(context.Background())
}

// Events is All, checking ctx every 1024 events: once ctx is done it yields
// ctx's error and ends.
func (r *Reader) Events(ctx context.Context) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		var ev Event
		for n := 0; ; n++ {
			if n&1023 == 0 && ctx.Err() != nil {
				yield(nil, ctx.Err())
				return
			}
			err := r.Next(&ev)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&ev, nil) {
				return
			}
		}
	}
}
