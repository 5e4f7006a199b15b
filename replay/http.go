package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/t3"
)

// exchange is an HTTP thread read in flight, whose response body the
// protocol layer's HTTP decoder keeps for the engine (HTTPOptions.Keep): the
// one decode of each exchange feeds both the conformance suite and the
// thread reads. Only GET /api/orchestration/threads/:id is kept: no check
// reads other exchanges.
type exchange struct {
	thread  string
	restart bool // this is the restart read
}

// keepThreadRead is the HTTP decoder's Keep: whether a request is a thread
// read a check will observe, noted for its response (threadResponse).
func (e *Engine) keepThreadRead(req *bundle.Event) bool {
	if e.decided() || req.Method != http.MethodGet {
		return false
	}
	u, err := url.Parse(req.URL)
	if err != nil || !strings.HasPrefix(u.Path, t3.PathThreadsPrefix) {
		return false
	}
	id := strings.TrimPrefix(u.Path, t3.PathThreadsPrefix)
	if id == "" || strings.Contains(id, "/") {
		return false
	}
	x := &exchange{thread: id}
	x.restart = e.phase == PhaseRestart && e.restartStage == restartWaitRead && id == e.parentThread
	if !x.restart && !e.interesting(id) {
		return false
	}
	e.http[req.Conn] = x
	return true
}

// threadResponse takes the end of an HTTP exchange from the decoder: for a
// kept thread read, its status and whole body. An exchange the decoder ended
// itself (the server stopped, the bundle ended: an End without a recorded
// error) was never read whole, so nothing is observed.
func (e *Engine) threadResponse(pe *protocol.Event) {
	x := e.http[pe.Conn]
	if x == nil {
		return
	}
	delete(e.http, pe.Conn)
	if e.decided() || (pe.Kind == protocol.KindEnd && pe.Err == nil) {
		return
	}
	// The http.end being fed: the last event that mattered (as Feed notes
	// after it), set first since the read may decide the run.
	e.lastSeq, e.lastT = pe.Seq, pe.T
	at := &bundle.Event{Seq: pe.Seq, T: pe.T, Kind: bundle.KindHTTPEnd, Conn: pe.Conn}
	var errText string
	if pe.Err != nil {
		errText = pe.Err.Error()
	}
	switch {
	case pe.BodyTooBig:
		errText = fmt.Sprintf("response body larger than %d bytes", e.maxBody)
	case pe.Truncated:
		errText = "the recorded body was truncated"
	}
	body := []byte(pe.Body)
	if x.restart {
		if e.phase != PhaseRestart || e.restartStage != restartWaitRead {
			return
		}
		e.restartRead(assert.RestartRead{Status: pe.Status, Body: body, Err: errText}, at)
		return
	}
	if pe.Status != http.StatusOK || errText != "" {
		return
	}
	if p, ok := e.lean.threadRead(body); ok && p != nil {
		e.observe(SourceHTTPRead, x.thread, p, at)
		return
	}
	var read struct {
		Projection *t3.Projection `json:"projection"`
	}
	if err := json.Unmarshal(body, &read); err != nil || read.Projection == nil {
		if err == nil {
			err = fmt.Errorf("no projection")
		}
		e.keepError(pe.Seq, pe.Conn, fmt.Errorf("thread read of %s: %w", x.thread, err), body)
		return
	}
	e.observe(SourceHTTPRead, x.thread, read.Projection, at)
}
