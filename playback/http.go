package playback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/wireproof/wireproof/internal/httphop"
)

func (p *Player) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if p.isClosed() {
		http.Error(w, "wireproof playback is stopping", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.opts.MaxBody))
	if err != nil {
		// Nothing recorded can be matched to a body not read whole: a
		// miss, counted and explained like any other.
		code := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			code = http.StatusRequestEntityTooLarge
		}
		miss := Miss{Kind: "http exchange", Request: r.Method + " " + r.URL.RequestURI(),
			Reason: "its body could not be read: " + err.Error()}
		miss = p.addMiss(miss)
		w.Header().Set("X-Wireproof-Playback", "miss")
		http.Error(w, miss.String(), code)
		return
	}
	arrived := time.Now()
	live := newRequest(r.Method, r.URL, body, r.Header.Get("Content-Type"))
	summary := r.Method + " " + r.URL.RequestURI()

	p.ids.mu.Lock()
	i, repeated := -1, false
	if p.opts.Match != nil {
		i, repeated = p.pickMatch(r, body, &live)
	} else if cands := p.httpIndex.candidates(&live); cands != nil {
		i, repeated = p.pick(p.httpReqs, p.httpPlayed, &live, cands)
	}
	if i < 0 && p.opts.Match == nil {
		// The index only narrows: what it does not find is looked for
		// everywhere before it is a miss.
		i, repeated = p.pick(p.httpReqs, p.httpPlayed, &live, nil)
	}
	var miss Miss
	if i < 0 {
		miss = p.closest("http exchange", p.httpReqs, p.httpPlayed, func(i int) (uint64, string) {
			x := p.rec.Exchanges[i]
			return x.Seq, x.Method + " " + x.URL.RequestURI()
		}, &live, summary)
	}
	p.ids.mu.Unlock()

	if i < 0 {
		miss = p.addMiss(miss)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Wireproof-Playback", "miss")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(struct {
			Error string `json:"error"`
			Miss  Miss   `json:"miss"`
		}{miss.String(), miss})
		return
	}
	p.played(repeated)
	p.respond(w, r, p.rec.Exchanges[i], arrived)
}

// respond plays a recorded response: its status and headers after the
// recorded latency (the 1xx responses relayed before it first), then its
// body chunk by chunk with the recorded gaps and its trailers, ids mapped to
// the client's.
func (p *Player) respond(w http.ResponseWriter, r *http.Request, x *Exchange, arrived time.Time) {
	ctx := r.Context()
	if x.Status == 0 {
		http.Error(w, "wireproof playback: the recorded upstream did not answer: "+x.Err, http.StatusBadGateway)
		return
	}
	h := w.Header()
	t := p.opts.Timing
	if t.wait(ctx, arrived, x.RespT-x.ReqT) != nil {
		return
	}
	// The 1xx responses, as the proxy relayed them: never to an HTTP/1.0
	// client (RFC 9110 section 15.2), and no 100 Continue, which the server
	// sent already if the client asked for it, when its body was read.
	for _, in := range x.Informational {
		if !r.ProtoAtLeast(1, 1) || in.Status == http.StatusContinue || in.Status < 100 || in.Status > 199 || in.Status == http.StatusSwitchingProtocols {
			continue
		}
		for k, vs := range in.Header {
			for _, v := range vs {
				h.Add(k, p.ids.applyString(v))
			}
		}
		w.WriteHeader(in.Status)
		clear(h) // a 1xx's headers are its own (WriteHeader keeps them)
	}
	for k, vs := range x.RespHeader {
		for _, v := range vs {
			h.Add(k, p.ids.applyString(v))
		}
	}
	httphop.Remove(h)
	if r.Method != http.MethodHead {
		// Left to the server: replies carry the client's ids. A HEAD's is
		// the length of a body it never carries, kept as recorded.
		h.Del("Content-Length")
	}
	if x.Decoded {
		h.Del("Content-Encoding") // the recording holds the body decoded
	}
	for k := range x.Trailer {
		h.Add("Trailer", k)
	}
	w.WriteHeader(x.Status)
	rc := http.NewResponseController(w)
	prevT, prevWall := x.RespT, time.Now()
	for i, c := range x.Chunks {
		if i > 0 || len(x.Chunks) > 1 {
			if t.wait(ctx, prevWall, c.T-prevT) != nil {
				return
			}
		}
		if _, err := w.Write(p.ids.apply(c.Data)); err != nil {
			return
		}
		rc.Flush()
		prevT, prevWall = c.T, time.Now()
	}
	for k, vs := range x.Trailer {
		for _, v := range vs {
			h.Add(k, p.ids.applyString(v))
		}
	}
}

// pickMatch is pick with Options.Match deciding: the first unplayed
// recorded exchange it accepts, else (repeated) the last played one. The
// caller holds p.ids.mu.
func (p *Player) pickMatch(r *http.Request, body []byte, live *request) (idx int, repeated bool) {
	accepts := func(i int) bool {
		lr := r.Clone(r.Context())
		lr.Body = io.NopCloser(bytes.NewReader(body))
		if !p.opts.Match(p.rec.Exchanges[i].request(r.Context()), lr) {
			return false
		}
		if b := p.ids.begin(); b.unifyRequest(&p.httpReqs[i], live) {
			b.commit() // learn the ids where the two agree
		}
		return true
	}
	for i := range p.rec.Exchanges {
		if !p.httpPlayed[i] && accepts(i) {
			p.httpPlayed[i] = true
			return i, false
		}
	}
	for i := len(p.rec.Exchanges) - 1; i >= 0; i-- {
		if p.httpPlayed[i] && accepts(i) {
			return i, true
		}
	}
	return -1, false
}

// request is the recorded request as an *http.Request for Options.Match:
// its method, URL (path and query as recorded), headers (credentials
// redacted) and body.
func (x *Exchange) request(ctx context.Context) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, x.Method, x.URL.String(), bytes.NewReader(x.Body))
	r.Header = x.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.RequestURI = x.URL.RequestURI()
	return r
}
