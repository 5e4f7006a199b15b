package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/t3"
)

// exchange is an HTTP thread read in flight. Only GET
// /api/orchestration/threads/:id is kept: no check reads other exchanges.
type exchange struct {
	thread  string
	status  int
	body    []byte
	tooBig  bool
	restart bool // this is the restart read
}

func (e *Engine) httpEvent(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindHTTPRequest:
		if ev.Method != http.MethodGet {
			return
		}
		u, err := url.Parse(ev.URL)
		if err != nil || !strings.HasPrefix(u.Path, t3.PathThreadsPrefix) {
			return
		}
		id := strings.TrimPrefix(u.Path, t3.PathThreadsPrefix)
		if id == "" || strings.Contains(id, "/") {
			return
		}
		x := &exchange{thread: id}
		x.restart = e.phase == PhaseRestart && e.restartStage == restartWaitRead && id == e.parentThread
		if !x.restart && !e.interesting(id) {
			return
		}
		e.http[ev.Conn] = x
	case bundle.KindHTTPResponse:
		if x := e.http[ev.Conn]; x != nil {
			x.status = ev.Status
		}
	case bundle.KindHTTPBody:
		if x := e.http[ev.Conn]; x != nil && ev.Dir == bundle.DirServerToClient && !x.tooBig {
			if len(x.body)+len(ev.Body.Data) > e.maxBody {
				x.tooBig, x.body = true, nil
				return
			}
			x.body = append(x.body, ev.Body.Data...)
		}
	case bundle.KindHTTPEnd:
		x := e.http[ev.Conn]
		if x == nil {
			return
		}
		delete(e.http, ev.Conn)
		e.threadRead(x, ev)
	}
}

// threadRead observes a finished HTTP thread read and, after the restart,
// runs the durability checks on it.
func (e *Engine) threadRead(x *exchange, ev *bundle.Event) {
	errText := ev.Err
	switch {
	case x.tooBig:
		errText = fmt.Sprintf("response body larger than %d bytes", e.maxBody)
	case ev.Truncated:
		errText = "the recorded body was truncated"
	}
	if x.restart {
		if e.phase != PhaseRestart || e.restartStage != restartWaitRead {
			return
		}
		e.restartRead(assert.RestartRead{Status: x.status, Body: x.body, Err: errText}, ev)
		return
	}
	if x.status != http.StatusOK || errText != "" {
		return
	}
	if p, ok := e.lean.threadRead(x.body); ok && p != nil {
		e.observe(SourceHTTPRead, x.thread, p, ev)
		return
	}
	var read struct {
		Projection *t3.Projection `json:"projection"`
	}
	if err := json.Unmarshal(x.body, &read); err != nil || read.Projection == nil {
		if err == nil {
			err = fmt.Errorf("no projection")
		}
		e.keepError(ev.Seq, ev.Conn, fmt.Errorf("thread read of %s: %w", x.thread, err), x.body)
		return
	}
	e.observe(SourceHTTPRead, x.thread, read.Projection, ev)
}
