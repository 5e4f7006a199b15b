package claude

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// TapFrame is one line of the stream a provider sends to the recorder's
// stdio tap endpoint (EnvTap): first a frame with Argv and Pid, then one frame
// per stdin ("in") or stdout ("out") line, then one with Exit.
type TapFrame struct {
	Argv []string `json:"argv,omitempty"`
	Pid  int      `json:"pid,omitempty"`
	Dir  string   `json:"dir,omitempty"` // "in" (stdin) or "out" (stdout)
	Line string   `json:"line,omitempty"`
	Exit *int     `json:"exit,omitempty"`
}

// Tap directions.
const (
	TapIn  = "in"
	TapOut = "out"
)

// tapClient streams frames to the tap endpoint in one POST. Frames are queued
// in order and written by one goroutine, so a slow recorder never blocks the
// protocol; Close sends the exit frame and waits until the recorder has read
// everything (or the connection failed).
type tapClient struct {
	mu     sync.Mutex
	queue  []TapFrame
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func newTapClient(url string, hc *http.Client, argv []string, pid int, logf func(string, ...any)) *tapClient {
	t := &tapClient{wake: make(chan struct{}, 1), done: make(chan struct{})}
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		logf("stdio tap %s: %v", url, err)
		close(t.done)
		return nil
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	t.queue = append(t.queue, TapFrame{Argv: argv, Pid: pid})
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

func (t *tapClient) send(f TapFrame) {
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

// close sends the exit frame and waits for the stream to end.
func (t *tapClient) close(code int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if !t.closed {
		t.queue = append(t.queue, TapFrame{Exit: &code})
		t.closed = true
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
	<-t.done
}
