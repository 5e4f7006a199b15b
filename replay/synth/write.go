package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/wireproof/wireproof/bundle"
)

// WriteBundle writes events (header first, as Build returns them) to a new
// bundle file at path, keeping their times. The Writer assigns the same seqs
// and writes the trailer.
func WriteBundle(path string, events []bundle.Event) error {
	if len(events) == 0 || events[0].Kind != bundle.KindHeader {
		return fmt.Errorf("synth: write %s: the events do not start with a header", path)
	}
	var h bundle.Header
	if err := json.Unmarshal(events[0].Body.Data, &h); err != nil {
		return fmt.Errorf("synth: write %s: header: %w", path, err)
	}
	var now int64
	w, err := bundle.Create(path, h, &bundle.WriterOptions{Clock: func() int64 { return now }})
	if err != nil {
		return err
	}
	for i := 1; i < len(events); i++ {
		ev := events[i]
		now = ev.T
		seq, err := w.Append(&ev)
		if err != nil {
			w.Close()
			return err
		}
		if seq != events[i].Seq {
			w.Close()
			return fmt.Errorf("synth: write %s: event %d got seq %d", path, events[i].Seq, seq)
		}
	}
	return w.Close()
}

// WriteTruncated writes events as a recorder killed after the last of them
// leaves them: every event flushed, no trailer, the zstd frame unfinished.
func WriteTruncated(path string, events []bundle.Event) error {
	if len(events) == 0 || events[0].Kind != bundle.KindHeader {
		return fmt.Errorf("synth: write %s: the events do not start with a header", path)
	}
	var h bundle.Header
	if err := json.Unmarshal(events[0].Body.Data, &h); err != nil {
		return fmt.Errorf("synth: write %s: header: %w", path, err)
	}
	var buf bytes.Buffer
	var now int64
	w, err := bundle.NewWriter(&lockedBuffer{b: &buf}, h, &bundle.WriterOptions{Clock: func() int64 { return now }})
	if err != nil {
		return err
	}
	for i := 1; i < len(events); i++ {
		ev := events[i]
		now = ev.T
		if _, err := w.Append(&ev); err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		w.Close()
		return err
	}
	cut := append([]byte(nil), buf.Bytes()...)
	w.Close() // stops the writer; its trailer goes to buf, not to the file
	return os.WriteFile(path, cut, 0o600)
}

// lockedBuffer is a bytes.Buffer the Writer's flusher may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
