package record

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestHalfSentHeaderIsDropped: a client that sends half a request header
// to the recording proxy and waits (slowloris) has its connection closed
// once headerTimeout passes instead of holding it forever; a whole request
// on another connection is relayed meanwhile.
func TestHalfSentHeaderIsDropped(t *testing.T) {
	defer func(h time.Duration) { headerTimeout = h }(headerTimeout)
	headerTimeout = 200 * time.Millisecond
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	r := startRecording(t, up.URL, nil)
	dropped := testkit.HalfSentHeader(t, r.URL)
	res, err := http.Get(r.URL + "/b")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !dropped() {
		t.Errorf("a half-sent header still held its connection open after 20 s")
	}
	r.stop()
}
