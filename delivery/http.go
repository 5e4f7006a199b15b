package delivery

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
// protocol layer's HTTP decoder keeps for the scenario (KeepBody): the
// one decode of each exchange feeds both the conformance suite and the
// thread reads. Only GET /api/orchestration/threads/:id is kept: no check
// reads other exchanges.
type exchange struct {
	thread  string
	restart bool // this is the restart read
}

// KeepBody implements replay.ScenarioRun: whether a request is a thread
// read a check will observe, noted for its response (Protocol).
func (r *run) KeepBody(req *bundle.Event) bool {
	if r.Decided() || req.Method != http.MethodGet {
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
	x.restart = r.phase == PhaseRestart && r.restartStage == restartWaitRead && id == r.parentThread
	if !x.restart && !r.interesting(id) {
		return false
	}
	r.http[req.Conn] = x
	return true
}

// Protocol implements replay.ScenarioRun: the end of an HTTP exchange, for a
// kept thread read its status and whole body. An exchange the decoder ended
// itself (the server stopped, the bundle ended: an End without a recorded
// error) was never read whole, so nothing is observed.
func (r *run) Protocol(pe *protocol.Event) {
	if pe.Protocol != protocol.HTTP || pe.Kind != protocol.KindResponse && pe.Kind != protocol.KindEnd {
		return
	}
	x := r.http[pe.Conn]
	if x == nil {
		return
	}
	delete(r.http, pe.Conn)
	if r.Decided() || (pe.Kind == protocol.KindEnd && pe.Err == nil) {
		return
	}
	// The http.end being fed: the last event that mattered (as the engine
	// notes after it), set first since the read may decide the run.
	r.env.Mattered(pe.Seq, pe.T)
	at := &bundle.Event{Seq: pe.Seq, T: pe.T, Kind: bundle.KindHTTPEnd, Conn: pe.Conn}
	var errText string
	if pe.Err != nil {
		errText = pe.Err.Error()
	}
	switch {
	case pe.BodyTooBig:
		errText = fmt.Sprintf("response body larger than %d bytes", r.env.MaxBody())
	case pe.Truncated:
		errText = "the recorded body was truncated"
	}
	body := []byte(pe.Body)
	if x.restart {
		if r.phase != PhaseRestart || r.restartStage != restartWaitRead {
			return
		}
		r.restartRead(assert.RestartRead{Status: pe.Status, Body: body, Err: errText}, at)
		return
	}
	if pe.Status != http.StatusOK || errText != "" {
		return
	}
	if p, ok := r.lean.threadRead(body); ok && p != nil {
		r.observe(SourceHTTPRead, x.thread, p, at)
		return
	}
	var read struct {
		Projection *t3.Projection `json:"projection"`
	}
	if err := json.Unmarshal(body, &read); err != nil || read.Projection == nil {
		if err == nil {
			err = fmt.Errorf("no projection")
		}
		r.env.KeepError(pe.Seq, pe.Conn, fmt.Errorf("thread read of %s: %w", x.thread, err), body)
		return
	}
	r.observe(SourceHTTPRead, x.thread, read.Projection, at)
}
