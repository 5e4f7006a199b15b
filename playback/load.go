package playback

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/wireproof/wireproof/bundle"
)

// Recording is the server side of a bundle, as playback serves it.
type Recording struct {
	Header    bundle.Header
	Exchanges []*Exchange // in the order their requests were recorded
	Conns     []*Conn     // in the order they were opened
	// Truncated says why the bundle ends short of its trailer (a recorder
	// that was killed: bundle.Reader.TruncatedReason), "" when it does not.
	// What it holds is served as far as it was recorded.
	Truncated string
}

// Exchange is one recorded HTTP exchange.
type Exchange struct {
	ID     string // the bundle's conn id, "h3"
	Seq    uint64 // of the request
	Method string
	URL    *url.URL // path and query as the client sent them
	Header http.Header
	Body   []byte
	ReqT   int64 // when the request (its last body chunk) was seen, ns

	Status     int // 0: the upstream never answered
	RespHeader http.Header
	RespT      int64
	Chunks     []Chunk
	Truncated  bool // the recorded response body stopped at the body cap
	// Decoded: the recorder decoded the compressed body (attrs "decoded"),
	// so it is served as identity.
	Decoded bool
	Err     string // why the exchange ended early, if it did
	EndT    int64  // when the exchange ended (its http.end), ns; 0 when it never did
	// Informational are the 1xx responses relayed before the final one
	// (http.response's attrs "informational"), in order.
	Informational []Informational
	// Trailer is the response's trailers (http.end's attrs
	// "responseTrailer"), nil when it had none.
	Trailer http.Header
}

// Informational is one recorded 1xx response.
type Informational struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
}

// Chunk is one piece of a response body as it arrived.
type Chunk struct {
	T    int64
	Data []byte
}

// Conn is one recorded WebSocket connection.
type Conn struct {
	ID          string // "ws2"
	Seq         uint64
	T           int64
	URL         *url.URL
	Header      http.Header
	Subprotocol string
	Frames      []Frame
	CloseCode   int // the server's close status, 0 if the client closed first
	CloseReason string
}

// Frame is one recorded WebSocket message.
type Frame struct {
	Seq    uint64 // the message's event in the bundle
	T      int64
	Dir    bundle.Dir
	Binary bool
	Data   []byte
}

// Load reads the bundle at path.
func Load(ctx context.Context, path string) (*Recording, error) {
	r, err := bundle.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return Read(ctx, r)
}

// Read reads a Recording from r. A bundle cut short (a crash) is read up to
// where it ends: exchanges and connections still open are served as far as
// they were recorded.
func Read(ctx context.Context, r *bundle.Reader) (*Recording, error) {
	rec := &Recording{Header: r.Header()}
	xs := map[string]*Exchange{}
	conns := map[string]*Conn{}
	for ev, err := range r.Events(ctx) {
		if err != nil {
			return nil, err
		}
		switch ev.Kind {
		case bundle.KindHTTPRequest:
			u, err := url.ParseRequestURI(ev.URL)
			if err != nil {
				return nil, fmt.Errorf("seq %d: request URL %q: %w", ev.Seq, ev.URL, err)
			}
			x := &Exchange{ID: ev.Conn, Seq: ev.Seq, Method: ev.Method, URL: u, Header: ev.Header.Clone(), ReqT: ev.T}
			xs[ev.Conn] = x
			rec.Exchanges = append(rec.Exchanges, x)
		case bundle.KindHTTPBody:
			x := xs[ev.Conn]
			if x == nil {
				continue
			}
			if ev.Dir == bundle.DirClientToServer {
				x.Body = append(x.Body, ev.Body.Data...)
				x.ReqT = ev.T
			} else {
				x.Chunks = append(x.Chunks, Chunk{T: ev.T, Data: slices.Clone(ev.Body.Data)})
				if len(ev.Attrs) > 0 {
					var a struct {
						Decoded string `json:"decoded"`
					}
					if json.Unmarshal(ev.Attrs, &a) == nil && a.Decoded != "" {
						x.Decoded = true
					}
				}
			}
		case bundle.KindHTTPResponse:
			if x := xs[ev.Conn]; x != nil {
				x.Status, x.RespHeader, x.RespT = ev.Status, ev.Header.Clone(), ev.T
				if len(ev.Attrs) > 0 {
					var a struct {
						Informational []Informational `json:"informational"`
					}
					if json.Unmarshal(ev.Attrs, &a) == nil {
						x.Informational = a.Informational
					}
				}
			}
		case bundle.KindHTTPEnd:
			if x := xs[ev.Conn]; x != nil {
				x.Truncated, x.Err, x.EndT = ev.Truncated, ev.Err, ev.T
				if len(ev.Attrs) > 0 {
					var a struct {
						Trailer http.Header `json:"responseTrailer"`
					}
					if json.Unmarshal(ev.Attrs, &a) == nil {
						x.Trailer = a.Trailer
					}
				}
				delete(xs, ev.Conn)
			}
		case bundle.KindWSOpen:
			u, err := url.ParseRequestURI(ev.URL)
			if err != nil {
				return nil, fmt.Errorf("seq %d: WebSocket URL %q: %w", ev.Seq, ev.URL, err)
			}
			c := &Conn{ID: ev.Conn, Seq: ev.Seq, T: ev.T, URL: u, Header: ev.Header.Clone(), Subprotocol: ev.Name}
			conns[ev.Conn] = c
			rec.Conns = append(rec.Conns, c)
		case bundle.KindWSMessage:
			if c := conns[ev.Conn]; c != nil {
				c.Frames = append(c.Frames, Frame{Seq: ev.Seq, T: ev.T, Dir: ev.Dir, Binary: ev.Type == bundle.TypeBinary, Data: slices.Clone(ev.Body.Data)})
			}
		case bundle.KindWSClose:
			if c := conns[ev.Conn]; c != nil {
				if ev.Dir == bundle.DirServerToClient {
					c.CloseCode, c.CloseReason = ev.Code, ev.Reason
				}
				delete(conns, ev.Conn)
			}
		}
	}
	if r.Truncated() {
		rec.Truncated = r.TruncatedReason()
	}
	return rec, nil
}
