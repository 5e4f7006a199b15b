package claude

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// TapFrame is one line of the stream a provider sends to the recorder's
// stdio tap endpoint (EnvTap): first a frame with Argv and Pid (and, from a
// wrapper, the Exec it ran), then one frame per stdin ("in"), stdout ("out")
// or stderr ("err") line, then one with Exit (and Signal, when a signal ended
// the process; Exit is then -1).
type TapFrame struct {
	Argv   []string `json:"argv,omitempty"`
	Exec   []string `json:"exec,omitempty"`
	Pid    int      `json:"pid,omitempty"`
	Dir    string   `json:"dir,omitempty"` // TapIn, TapOut or TapErr
	Line   string   `json:"line,omitempty"`
	Exit   *int     `json:"exit,omitempty"`
	Signal string   `json:"signal,omitempty"`
}

// Tap directions.
const (
	TapIn  = "in"
	TapOut = "out"
	TapErr = "err"
)

// Tap streams frames to the tap endpoint in one POST. Frames are queued in
// order and written by one goroutine, so a slow recorder never blocks the
// protocol; Close sends the exit frame and waits until the recorder has read
// everything (or the connection failed). A nil *Tap does nothing.
type Tap struct {
	mu     sync.Mutex
	queue  []TapFrame
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

// NewTap starts the stream to the tap endpoint at url with the first frame
// (first.Argv must be set); logf hears why the stream failed, if it does.
func NewTap(url string, hc *http.Client, first TapFrame, logf func(string, ...any)) *Tap {
	t := &Tap{wake: make(chan struct{}, 1), done: make(chan struct{})}
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		logf("stdio tap %s: %v", url, err)
		close(t.done)
		return nil
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	t.queue = append(t.queue, first)
	resp := make(chan error, 1)
	go func() {
		res, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode >= 300 {
				err = &tapStatusError{res.StatusCode}
			}
		}
		pr.CloseWithError(io.ErrClosedPipe)
		resp <- err
	}()
	go func() {
		defer close(t.done)
		w := bufio.NewWriter(pw)
		enc := json.NewEncoder(w)
		for {
			t.mu.Lock()
			batch, closed := t.queue, t.closed
			t.queue = nil
			t.mu.Unlock()
			for _, f := range batch {
				if err := enc.Encode(f); err != nil {
					break
				}
			}
			if err := w.Flush(); err != nil || closed {
				pw.Close()
				if err := <-resp; err != nil {
					logf("stdio tap %s: %v", url, err)
				}
				return
			}
			<-t.wake
		}
	}()
	return t
}

type tapStatusError struct{ status int }

func (e *tapStatusError) Error() string {
	return "tap endpoint answered HTTP " + http.StatusText(e.status)
}

// Send queues one frame.
func (t *Tap) Send(f TapFrame) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if !t.closed {
		t.queue = append(t.queue, f)
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Close sends the exit frame (the exit status, or -1 and the signal that
// ended the process) and waits for the stream to end.
func (t *Tap) Close(code int, signal string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if !t.closed {
		t.queue = append(t.queue, TapFrame{Exit: &code, Signal: signal})
		t.closed = true
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
	<-t.done
}
