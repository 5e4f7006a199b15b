package triage

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
)

// HAR is a HAR 1.2 document (http://www.softwareishard.com/blog/har-12-spec/).
type HAR struct {
	Log HARLog `json:"log"`
}

// HARLog is the log object of a HAR document.
type HARLog struct {
	Version string     `json:"version"`
	Creator HARCreator `json:"creator"`
	Comment string     `json:"comment,omitempty"`
	Entries []HAREntry `json:"entries"`
}

// HARCreator names the tool that wrote the HAR.
type HARCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HAREntry is one HTTP exchange or WebSocket connection. WebSocket messages go
// in _webSocketMessages, as Chrome writes them, so DevTools shows them.
type HAREntry struct {
	StartedDateTime string         `json:"startedDateTime"`
	Time            float64        `json:"time"` // ms
	Request         HARRequest     `json:"request"`
	Response        HARResponse    `json:"response"`
	Cache           struct{}       `json:"cache"`
	Timings         HARTimings     `json:"timings"`
	Comment         string         `json:"comment,omitempty"`
	ResourceType    string         `json:"_resourceType,omitempty"`
	WSMessages      []HARWSMessage `json:"_webSocketMessages,omitzero"` // [] for a socket with none (nil for HTTP: omitted)
}

// HARRequest is a HAR request.
type HARRequest struct {
	Method      string         `json:"method"`
	URL         string         `json:"url"`
	HTTPVersion string         `json:"httpVersion"`
	Cookies     []HARNameValue `json:"cookies"`
	Headers     []HARNameValue `json:"headers"`
	QueryString []HARNameValue `json:"queryString"`
	PostData    *HARPostData   `json:"postData,omitempty"`
	HeadersSize int            `json:"headersSize"`
	BodySize    int64          `json:"bodySize"`
}

// HARResponse is a HAR response.
type HARResponse struct {
	Status      int            `json:"status"`
	StatusText  string         `json:"statusText"`
	HTTPVersion string         `json:"httpVersion"`
	Cookies     []HARNameValue `json:"cookies"`
	Headers     []HARNameValue `json:"headers"`
	Content     HARContent     `json:"content"`
	RedirectURL string         `json:"redirectURL"`
	HeadersSize int            `json:"headersSize"`
	BodySize    int64          `json:"bodySize"`
	Comment     string         `json:"comment,omitempty"`
}

// HARNameValue is a header, query parameter or cookie.
type HARNameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HARPostData is a request body.
type HARPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"encoding,omitempty"` // non-standard but widely read: "base64"
	Comment  string `json:"comment,omitempty"`
}

// HARContent is a response body.
type HARContent struct {
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	Encoding string `json:"encoding,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// HARTimings are the phases of an exchange in ms; -1 is "does not apply".
type HARTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// HARWSMessage is one WebSocket message as Chrome exports it: time in epoch
// seconds, opcode 1 text or 2 binary (data base64).
type HARWSMessage struct {
	Type   string  `json:"type"` // send or receive
	Time   float64 `json:"time"`
	Opcode int     `json:"opcode"`
	Data   string  `json:"data"`
}

// HAROptions tune BuildHAR. A nil *HAROptions means the defaults.
type HAROptions struct {
	// Version is the creator version written; "" means "dev".
	Version string
}

// BuildHAR turns the HTTP exchanges and WebSocket connections of tl into a
// HAR document, in the order they started. Times are the header's start
// plus each event's offset, so the same bundle always gives the same HAR.
func BuildHAR(tl *Timeline, opts *HAROptions) *HAR {
	version := "dev"
	if opts != nil && opts.Version != "" {
		version = opts.Version
	}
	h := &HAR{Log: HARLog{Version: "1.2", Creator: HARCreator{Name: "wireproof", Version: version}, Entries: []HAREntry{}}}
	if tl.Path != "" {
		h.Log.Comment = "exported from " + tl.Path
	}
	if tl.Truncated {
		h.Log.Comment = strings.TrimSpace(h.Log.Comment + "; the bundle is truncated: " + tl.TruncatedReason)
	}
	type started struct {
		seq   uint64
		entry HAREntry
	}
	var all []started
	for _, x := range tl.HTTP {
		all = append(all, started{x.RequestSeq, harHTTP(tl, x)})
	}
	for _, c := range tl.WS {
		all = append(all, started{c.OpenSeq, harWS(tl, c)})
	}
	slices.SortFunc(all, func(a, b started) int { return int(int64(a.seq) - int64(b.seq)) })
	for _, s := range all {
		h.Log.Entries = append(h.Log.Entries, s.entry)
	}
	return h
}

// WriteHAR writes tl as an indented HAR document.
func WriteHAR(w io.Writer, tl *Timeline, opts *HAROptions) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(BuildHAR(tl, opts))
}

func (tl *Timeline) wall(t int64) time.Time {
	return tl.Header.Started.Add(time.Duration(t)).UTC()
}

func harTime(tl *Timeline, t int64) string {
	return tl.wall(t).Format("2006-01-02T15:04:05.000Z07:00")
}

func ms(d int64) float64 {
	if d < 0 {
		return 0
	}
	return float64(d/1000) / 1000 // µs precision keeps the numbers short and exact
}

// absURL makes the recorded path and query absolute: HAR viewers want one.
// The origin is the one the traffic of connection conn went to. A verify
// run's model proxy (connections bundle.ModelConnPrefix...) relayed to the
// manifest's "modelUpstream", else to the scripted model on loopback, whose
// port the bundle does not hold ("model" stands for it). Every other
// connection went to the upstream a `wireproof record` bundle names in its
// manifest (without userinfo), else the request's Host, else the verify
// run's server port.
func absURL(tl *Timeline, conn, scheme, raw string, h http.Header) string {
	if u, err := url.Parse(raw); err == nil && u.IsAbs() {
		return raw
	}
	if !strings.HasPrefix(raw, "/") {
		raw = "/" + raw
	}
	upstream := tl.Header.Manifest.Options["upstream"]
	if strings.HasPrefix(conn, bundle.ModelConnPrefix) {
		upstream = tl.Header.Manifest.Options["modelUpstream"]
		if _, _, ok := upstreamOrigin(upstream); !ok {
			return scheme + "://model" + raw
		}
	}
	if upScheme, upHost, ok := upstreamOrigin(upstream); ok {
		if upScheme == "https" {
			scheme = map[string]string{"http": "https", "ws": "wss"}[scheme]
		}
		return scheme + "://" + upHost + raw
	}
	host := h.Get("Host")
	if host == "" {
		if port := tl.Header.Manifest.Options["port"]; port != "" {
			host = "127.0.0.1:" + port
		} else {
			host = "server"
		}
	}
	return scheme + "://" + host + raw
}

// upstreamOrigin reads the scheme and host of a recorded --upstream URL,
// leaving out any userinfo. It does not use url.Parse: the manifest holds the
// URL redacted ("user:[REDACTED]@host"), which is no longer a valid URL.
func upstreamOrigin(s string) (scheme, host string, ok bool) {
	scheme, rest, found := strings.Cut(s, "://")
	if !found || (scheme != "http" && scheme != "https") {
		return "", "", false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return scheme, rest, rest != ""
}

func harHeaders(h http.Header) []HARNameValue {
	out := []HARNameValue{}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range h[k] {
			out = append(out, HARNameValue{Name: k, Value: v})
		}
	}
	return out
}

// harRedaction redacts decoded query pairs by the rules of the recorders that
// wrote the bundles: T3's token fields, which hold the generic ones.
var harRedaction = &redact.Options{TokenFields: t3.TokenFields}

func harQuery(raw string) []HARNameValue {
	out := []HARNameValue{}
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return out
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		// Decoding may reveal what the recording held only encoded (a
		// token inside a percent-encoded redirect URL): redact the decoded
		// pair by the recorder's rules before it is written in plain text.
		if red := redact.Text(name+"="+value, harRedaction); red != name+"="+value {
			if n, v, ok := strings.Cut(red, "="); ok && n == name {
				value = v
			} else {
				value = redact.Redacted
			}
		}
		out = append(out, HARNameValue{Name: name, Value: value})
	}
	return out
}

// bodyText returns a body as HAR text: verbatim when it is UTF-8 text, else
// base64 with encoding "base64".
func bodyText(b Body) (text, encoding string) {
	if b.Binary || !utf8.Valid(b.Data) {
		return base64.StdEncoding.EncodeToString(b.Data), "base64"
	}
	return string(b.Data), ""
}

func truncNote(b Body) string {
	if b.Truncated {
		return "body truncated: only the first bytes are kept"
	}
	return ""
}

func mimeOf(h http.Header) string {
	ct := h.Get("Content-Type")
	if ct == "" {
		return "application/octet-stream"
	}
	return ct
}

func harHTTP(tl *Timeline, x *HTTPExchange) HAREntry {
	e := HAREntry{StartedDateTime: harTime(tl, x.RequestT), Timings: HARTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}}
	e.Request = HARRequest{
		Method: x.Method, URL: absURL(tl, x.Conn, "http", x.URL, x.Header), HTTPVersion: "HTTP/1.1",
		Cookies: []HARNameValue{}, Headers: harHeaders(x.Header), QueryString: harQuery(x.URL),
		HeadersSize: -1, BodySize: x.Request.Size,
	}
	var notes []string
	if note := matchContentLength(e.Request.Headers, x.Request); note != "" {
		notes = append(notes, "request "+note)
	}
	if x.Request.Size > 0 {
		text, enc := bodyText(x.Request)
		e.Request.PostData = &HARPostData{MimeType: mimeOf(x.Header), Text: text, Encoding: enc, Comment: truncNote(x.Request)}
	}
	e.Response = HARResponse{
		Status: x.Status, StatusText: http.StatusText(x.Status), HTTPVersion: "HTTP/1.1",
		Cookies: []HARNameValue{}, Headers: harHeaders(x.RespHeader), RedirectURL: x.RespHeader.Get("Location"),
		HeadersSize: -1, BodySize: x.Response.Size,
	}
	if note := matchContentLength(e.Response.Headers, x.Response); note != "" && x.responseSeen {
		notes = append(notes, "response "+note)
	}
	text, enc := bodyText(x.Response)
	e.Response.Content = HARContent{Size: x.Response.Size, MimeType: mimeOf(x.RespHeader), Text: text, Encoding: enc, Comment: truncNote(x.Response)}
	if !x.responseSeen {
		e.Response.Status, e.Response.Comment = 0, "no response was recorded"
		e.Response.BodySize = -1
	}
	end := x.EndT
	if end == 0 {
		end = max(x.ResponseT, x.RequestT)
		e.Comment = "the exchange did not end in the bundle"
	}
	if x.Err != "" {
		e.Comment = "ended early: " + x.Err
	}
	if x.responseSeen {
		e.Timings.Wait = ms(x.ResponseT - x.RequestT)
		e.Timings.Receive = ms(end - x.ResponseT)
	} else {
		e.Timings.Wait = ms(end - x.RequestT)
	}
	e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive
	if len(notes) > 0 {
		e.Comment = strings.TrimPrefix(e.Comment+"; "+strings.Join(notes, "; "), "; ")
	}
	return e
}

// matchContentLength makes a Content-Length header agree with the body the
// bundle holds, which redaction may have made shorter or longer than what
// crossed the wire (bodySize is the recorded body's size). A body the
// recorder cut at its cap keeps the header: the size on the wire is then the
// better figure. It returns a note for the entry's comment when it changed
// the header.
func matchContentLength(hs []HARNameValue, b Body) string {
	if b.Truncated {
		return ""
	}
	want := strconv.FormatInt(b.Size, 10)
	for i := range hs {
		if strings.EqualFold(hs[i].Name, "Content-Length") && hs[i].Value != want {
			note := "Content-Length " + hs[i].Value + " on the wire, " + want + " as recorded (redaction changed the body)"
			hs[i].Value = want
			return note
		}
	}
	return ""
}

func harWS(tl *Timeline, c *WSConn) HAREntry {
	e := HAREntry{StartedDateTime: harTime(tl, c.OpenT), ResourceType: "websocket",
		Timings: HARTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}}
	e.Request = HARRequest{
		Method: http.MethodGet, URL: absURL(tl, c.Conn, "ws", c.URL, c.Header), HTTPVersion: "HTTP/1.1",
		Cookies: []HARNameValue{}, Headers: harHeaders(c.Header), QueryString: harQuery(c.URL), HeadersSize: -1,
	}
	respHeader := []HARNameValue{{Name: "Connection", Value: "Upgrade"}, {Name: "Upgrade", Value: "websocket"}}
	if c.Subprotocol != "" {
		respHeader = append(respHeader, HARNameValue{Name: "Sec-WebSocket-Protocol", Value: c.Subprotocol})
	}
	e.Response = HARResponse{Status: http.StatusSwitchingProtocols, StatusText: "Switching Protocols", HTTPVersion: "HTTP/1.1",
		Cookies: []HARNameValue{}, Headers: respHeader, Content: HARContent{MimeType: "x-unknown"}, HeadersSize: -1}
	e.WSMessages = []HARWSMessage{}
	for _, m := range c.Messages {
		hm := HARWSMessage{Type: "send", Time: epochSeconds(tl, m.T), Opcode: 1}
		if m.Dir == bundle.DirServerToClient {
			hm.Type = "receive"
		}
		if m.Body.Binary || !utf8.Valid(m.Body.Data) {
			hm.Opcode, hm.Data = 2, base64.StdEncoding.EncodeToString(m.Body.Data)
		} else {
			hm.Data = string(m.Body.Data)
		}
		e.WSMessages = append(e.WSMessages, hm)
	}
	end := c.CloseT
	if c.closed {
		// Every close, each side's own: "closed by c2s 1000; by s2c 4005 bye".
		var closes []string
		for _, cl := range c.Closes {
			s := "by " + string(cl.Dir)
			if cl.Code != 0 {
				s += " " + strconv.Itoa(cl.Code)
			}
			if cl.Reason != "" {
				s += " " + cl.Reason
			}
			if cl.Err != "" {
				s += ": " + cl.Err
			}
			closes = append(closes, s)
			end = max(end, cl.T)
		}
		e.Comment = "closed " + strings.Join(closes, "; ")
	} else {
		e.Comment = "not closed in the bundle"
		if n := len(c.Messages); n > 0 {
			end = c.Messages[n-1].T
		} else {
			end = c.OpenT
		}
	}
	e.Comment = strings.TrimSpace(e.Comment)
	e.Timings.Receive = ms(end - c.OpenT)
	e.Time = e.Timings.Receive
	return e
}

// epochSeconds is the wall time of t in seconds since the epoch, to the µs.
func epochSeconds(tl *Timeline, t int64) float64 {
	return float64(tl.wall(t).UnixMicro()) / 1e6
}
