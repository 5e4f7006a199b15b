package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
)

// redactWritten keeps the secrets learned during the recording out of what
// was written before they were learned. The header (the manifest with the
// recorded command's argv) is written before the first event, and an event
// is redacted with the secrets known when it is written, so a token learned
// from traffic (a bootstrap token sent as subject_token) that also stood on
// the command line, or in a process's proc.start, is in clear there. After
// the writer closed, the header and the events written before the last
// secret was learned (seq < setFrom) are redacted again with every secret;
// if that changes anything, the bundle is written anew beside the file and
// renamed over it, every event kept with its seq and time. Nothing is read
// back when no secret was learned after the start and no WebSocket text
// message was recorded (joinWSDeltas).
//
// Why at Close, rather than writing the manifest late or holding events
// back: a secret can be learned at any point of the run, the header must be
// the first line, and events held in memory until the end would be lost by
// a killed recorder, which today loses at most one flush interval.
//
// The same pass writes the WebSocket messages joinWSDeltas rewrote.
func (r *Recorder) redactWritten() error {
	set := r.red.Snapshot()
	learned := set != r.initial // else the caller wrote the header knowing every secret
	var joined map[uint64][]byte
	if r.wsText.Load() {
		var err error
		if joined, err = r.joinWSDeltas(); err != nil {
			return err
		}
	}
	dirty := len(joined) > 0
	if !dirty && learned {
		var err error
		if dirty, err = r.needsRedaction(); err != nil {
			return err
		}
	}
	if !dirty {
		return nil
	}
	in, err := bundle.Open(r.file, nil)
	if err != nil {
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	defer in.Close()
	h, err := r.redactHeader(in.Header())
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.file), "."+filepath.Base(r.file)+".*.redact")
	if err != nil {
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	var t int64
	w, err := bundle.NewWriter(tmp, h, &bundle.WriterOptions{Clock: func() int64 { return t }})
	if err != nil {
		tmp.Close()
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	fail := func(err error) error {
		w.Close()
		tmp.Close()
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	for ev, err := range in.All() {
		if err != nil {
			return fail(err)
		}
		if b, ok := joined[ev.Seq]; ok {
			ev.Body.Data = b
		}
		if learned && ev.Seq < r.setFrom {
			r.red.Event(ev, set)
		}
		t = ev.T
		seq, err := w.Append(ev)
		if err != nil {
			return fail(err)
		}
		if seq != ev.Seq {
			return fail(fmt.Errorf("event %d would get seq %d", ev.Seq, seq))
		}
	}
	if err := w.Close(); err != nil {
		tmp.Close()
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	if err := os.Rename(tmp.Name(), r.file); err != nil {
		return fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	return nil
}

// needsRedaction reads the header and the events before setFrom and
// reports whether the secrets known now change any of them.
func (r *Recorder) needsRedaction() (bool, error) {
	set := r.red.Snapshot()
	in, err := bundle.Open(r.file, nil)
	if err != nil {
		return false, fmt.Errorf("record: redacting %s again: %w", r.file, err)
	}
	defer in.Close()
	h := in.Header()
	redacted, err := r.redactHeader(h)
	if err != nil {
		return false, err
	}
	before, _ := json.Marshal(h)
	after, _ := json.Marshal(redacted)
	if !bytes.Equal(before, after) {
		return true, nil
	}
	for ev, err := range in.All() {
		if err != nil {
			return false, fmt.Errorf("record: redacting %s again: %w", r.file, err)
		}
		if ev.Seq >= r.setFrom {
			return false, nil
		}
		was := bundle.AppendEvent(nil, ev)
		cp := *ev
		r.red.Event(&cp, set)
		if !bytes.Equal(was, bundle.AppendEvent(nil, &cp)) {
			return true, nil
		}
	}
	return false, nil
}

// redactHeader returns h with every secret known now replaced: the header's
// JSON is redacted as a body is.
func (r *Recorder) redactHeader(h bundle.Header) (bundle.Header, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return h, err
	}
	var out bundle.Header
	if err := json.Unmarshal(r.red.Bytes(b, r.red.Snapshot()), &out); err != nil {
		return h, fmt.Errorf("record: redacting the header of %s again: %w", r.file, err)
	}
	return out, nil
}

// joinWSDeltas keeps a secret out of a text a WebSocket streamed in pieces,
// one per message (T3's thread.message-sent events, or any shape
// redact.Deltas knows), which a client joins. The live recording cannot
// join them: a message is recorded in the place it was relayed in before
// its peer can answer it (Reservation), and a piece whose tail may begin a
// secret would have to wait for the next, which T3 sends only after the
// client's Ack of this one. So at Close each connection's text messages,
// each direction's in turn, are read back through a Deltas with every
// secret known, and the messages it rewrites are returned by seq for
// redactWritten to write. Each message was redacted on its own when it was
// recorded; what the pass adds is a secret found only in the joined text.
func (r *Recorder) joinWSDeltas() (map[uint64][]byte, error) {
	in, err := bundle.Open(r.file, nil)
	if err != nil {
		return nil, fmt.Errorf("record: joining %s's WebSocket deltas: %w", r.file, err)
	}
	defer in.Close()
	type stream struct {
		d    *redact.Deltas
		seqs []uint64 // of the messages given to d and not yet returned
		msgs [][]byte // those messages, as given: the Deltas never writes into one
	}
	streams := map[[2]string]*stream{}
	var order [][2]string
	joined := map[uint64][]byte{}
	take := func(st *stream, out [][]byte) {
		for _, b := range out {
			if !bytes.Equal(b, st.msgs[0]) {
				joined[st.seqs[0]] = b
			}
			st.seqs, st.msgs = st.seqs[1:], st.msgs[1:]
		}
	}
	for ev, err := range in.All() {
		if err != nil {
			return nil, fmt.Errorf("record: joining %s's WebSocket deltas: %w", r.file, err)
		}
		if ev.Kind != bundle.KindWSMessage || ev.Body.Binary || ev.Body.Data == nil {
			continue
		}
		k := [2]string{ev.Conn, string(ev.Dir)}
		st := streams[k]
		if st == nil {
			st = &stream{d: redact.NewDeltas(r.red)}
			streams[k] = st
			order = append(order, k)
		}
		if st.d.Passes(ev.Body.Data) {
			continue // not copied: most messages are no delta
		}
		msg := bytes.Clone(ev.Body.Data)
		st.seqs, st.msgs = append(st.seqs, ev.Seq), append(st.msgs, msg)
		take(st, st.d.Next(msg))
	}
	for _, k := range order {
		st := streams[k]
		take(st, st.d.Flush(true))
	}
	return joined, nil
}
