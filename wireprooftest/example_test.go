package wireprooftest_test

import (
	"flag"
	"net/http"
	"testing"

	"github.com/wireproof/wireproof/wireprooftest"
)

var record = flag.Bool("record", false, "record testdata/api.zst against the real server")

// testAPI is a test (func TestAPI in a _test.go file) that records its
// traffic to a real server once, with go test -run TestAPI -record and the
// server running, and plays it back everywhere else, CI included.
func testAPI(t *testing.T) {
	var base string
	if *record {
		base = wireprooftest.Record(t, "http://127.0.0.1:3773", &wireprooftest.RecordOptions{Path: "testdata/api.zst"})
	} else {
		base = wireprooftest.Playback(t, "testdata/api.zst", nil)
	}
	res, err := http.Get(base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("health: %s", res.Status)
	}
}

func Example() {
	_ = testAPI
}
