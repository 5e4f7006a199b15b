package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wireproof/wireproof/bundle"
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
// back when no secret was learned after the start.
//
// Why at Close, rather than writing the manifest late or holding events
// back: a secret can be learned at any point of the run, the header must be
// the first line, and events held in memory until the end would be lost by
// a killed recorder, which today loses at most one flush interval.
func (r *Recorder) redactWritten() error {
	set := r.red.Snapshot()
	if set == r.initial {
		return nil // nothing learned: the caller wrote the header knowing every secret
	}
	dirty, err := r.needsRedaction()
	if err != nil || !dirty {
		return err
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
		if ev.Seq < r.setFrom {
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
