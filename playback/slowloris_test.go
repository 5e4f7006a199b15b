package playback

import (
	"net/http"
	"testing"
	"time"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestHalfSentHeaderIsDropped: a client that sends half a request header
// and waits (slowloris) has its connection closed once headerTimeout
// passes instead of holding it forever; a whole request on another
// connection is served. (With -o the recording proxy's server is in front,
// with its own timeout: record's TestHalfSentHeaderIsDropped.)
func TestHalfSentHeaderIsDropped(t *testing.T) {
	defer func(h time.Duration) { headerTimeout = h }(headerTimeout)
	headerTimeout = 200 * time.Millisecond
	srv := startPlayback(t, recordOK(t), nil)
	dropped := testkit.HalfSentHeader(t, srv.URL)
	res, err := http.Get(srv.URL + "/a")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !dropped() {
		t.Errorf("a half-sent header still held its connection open after 20 s")
	}
}
