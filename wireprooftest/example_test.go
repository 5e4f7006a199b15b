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

// Record and Playback chosen by a flag: record with -record against the
// running server, play back everywhere else (testAPI above).
func Example() {
	_ = testAPI
}

// testHealthOnce records testdata/health.zst the first time it runs (the
// server must be up then) and plays it back ever after: go-vcr's
// ModeRecordOnce. Delete the file to record it again.
func testHealthOnce(t *testing.T) {
	base := wireprooftest.RecordOnce(t, "http://127.0.0.1:3773", "testdata/health.zst", nil)
	res, err := http.Get(base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func ExampleRecordOnce() {
	_ = testHealthOnce
}

// testSDK drives code that builds the real server's URLs itself and takes
// an *http.Client: the transport sends its requests to the recording (or,
// once recorded, to the playback) instead.
func testSDK(t *testing.T) {
	base := wireprooftest.RecordOnce(t, "https://api.example.com", "testdata/sdk.zst", nil)
	client := &http.Client{Transport: wireprooftest.RoundTripper(base, nil)}
	res, err := client.Get("https://api.example.com/v1/items") // the code under test's own URL
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func ExampleRoundTripper() {
	_ = testSDK
}

// testSearch plays back a recording whose queries carried a timestamp the
// client makes anew each run: the Match hook matches by method and path
// and leaves the query out.
func testSearch(t *testing.T) {
	base := wireprooftest.Playback(t, "testdata/search.zst", &wireprooftest.PlaybackOptions{
		Match: func(recorded, live *http.Request) bool {
			return recorded.Method == live.Method && recorded.URL.Path == live.URL.Path
		},
	})
	res, err := http.Get(base + "/search?q=wire&now=1767225600")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func ExamplePlaybackOptions() {
	_ = testSearch
}

// testAcme records against an API whose key travels in a header of its own
// name: the RedactRequest hook names its value, so no spelling of it reaches
// the bundle (credentials in Authorization, cookies and token fields are
// redacted without a hook).
func testAcme(t *testing.T) {
	base := wireprooftest.Record(t, "http://127.0.0.1:8080", &wireprooftest.RecordOptions{
		Path: "testdata/acme.zst",
		RedactRequest: func(r *http.Request) []string {
			return []string{r.Header.Get("X-Acme-Key")}
		},
	})
	req, _ := http.NewRequest("GET", base+"/whoami", nil)
	req.Header.Set("X-Acme-Key", "the key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func ExampleRecordOptions() {
	_ = testAcme
}
