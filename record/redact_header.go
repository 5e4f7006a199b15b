package record

import "net/http"

// redactHTTPHeader returns h as the recording redacts a header (for one kept in
// attrs: trailers, 1xx responses).
func (r *Recorder) redactHTTPHeader(h http.Header) http.Header { return r.red.Header(h) }
