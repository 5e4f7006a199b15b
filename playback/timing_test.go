package playback

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseGap is the gap between the events the SSE server sends.
const sseGap = 80 * time.Millisecond

const sseEvents = 5

// sseServer sends sseEvents server-sent events sseGap apart.
func sseServer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := range sseEvents {
			if i > 0 {
				time.Sleep(sseGap)
			}
			fmt.Fprintf(w, "id: %d\ndata: {\"n\":%d}\n\n", i, i)
			rc.Flush()
		}
	})
}

// readEvents reads the event stream at url and returns when each event's
// data line arrived.
func readEvents(t *testing.T, url string) []time.Time {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	var at []time.Time
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			at = append(at, time.Now())
		}
	}
	if len(at) != sseEvents {
		t.Fatalf("%d events, want %d", len(at), sseEvents)
	}
	return at
}

func span(at []time.Time) time.Duration { return at[len(at)-1].Sub(at[0]) }

// TestSSETiming plays an event stream with its recorded gaps, scaled, and at
// once. The tolerance is a ratio of the played span to the recorded one,
// measured in the same run: never a wall-clock limit.
func TestSSETiming(t *testing.T) {
	path := recordSession(t, sseServer(), func(base string) { readEvents(t, base+"/events") })
	rec, err := Load(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Exchanges[0].Chunks); n != sseEvents {
		t.Fatalf("recorded %d body chunks, want one per event (%d)", n, sseEvents)
	}
	recSpan := time.Duration(rec.Exchanges[0].Chunks[sseEvents-1].T - rec.Exchanges[0].Chunks[0].T)

	// Playback never shortens a kept gap, so each timing's played span has
	// a floor: the recorded span scaled (less room for when the client's
	// reads of the first and last event were scheduled). Above the floor a
	// loaded machine can add any delay, so the timings are held to their
	// order instead, measured in the same run: fast plays faster than x4,
	// which plays faster than recorded.
	played := map[string]time.Duration{}
	for _, tc := range []struct {
		timing string
		min    float64 // floor of played span / recorded span
	}{
		{"recorded", 0.8},
		{"x4", 0.15},
		{"fast", 0},
	} {
		timing, err := ParseTiming(tc.timing)
		if err != nil {
			t.Fatal(err)
		}
		srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: timing}})
		played[tc.timing] = span(readEvents(t, srv.URL+"/events"))
		ratio := float64(played[tc.timing]) / float64(recSpan)
		t.Logf("%s: played %v for a recorded %v (ratio %.2f)", tc.timing, played[tc.timing], recSpan, ratio)
		if ratio < tc.min {
			t.Errorf("%s: played span / recorded span = %.2f, want at least %.2f: a kept gap was shortened", tc.timing, ratio, tc.min)
		}
	}
	if !(played["fast"] < played["x4"] && played["x4"] < played["recorded"]) {
		t.Errorf("played spans fast %v, x4 %v, recorded %v: want them in that order, each shorter than the next", played["fast"], played["x4"], played["recorded"])
	}
}

func TestParseTiming(t *testing.T) {
	for in, want := range map[string]Timing{"recorded": {}, "": {}, "fast": {Fast: true}, "x2": {Speed: 2}, "x0.5": {Speed: 0.5}} {
		got, err := ParseTiming(in)
		if err != nil || got != want {
			t.Errorf("ParseTiming(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"slow", "x0", "x-1", "2", "xfast"} {
		if _, err := ParseTiming(in); err == nil {
			t.Errorf("ParseTiming(%q) accepted", in)
		}
	}
}

func ExampleParseTiming() {
	for _, s := range []string{"recorded", "fast", "x4", "x0.5"} {
		t, _ := ParseTiming(s)
		fmt.Printf("%s: a recorded gap of 1s waits %v\n", t, t.scale(int64(time.Second)))
	}
	// Output:
	// recorded: a recorded gap of 1s waits 1s
	// fast: a recorded gap of 1s waits 0s
	// x4: a recorded gap of 1s waits 250ms
	// x0.5: a recorded gap of 1s waits 2s
}
