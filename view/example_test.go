package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/wireproof/wireproof/view"
)

// A script reads the same JSON API the pages use: here, the corpus rows and
// the failing event of one bundle.
func Example() {
	srcs, err := view.Resolve([]string{"../fixtures/golden/live/idle.zst", "../fixtures/golden/live/idle-duplicate-notification.zst"}, nil)
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(view.New(context.Background(), srcs, nil))
	defer ts.Close()

	var corpus view.CorpusResponse
	get(ts.URL+"/api/bundles", &corpus)
	for _, r := range corpus.Bundles {
		fmt.Printf("%-28s %-7s %-20s %s\n", r.Name, r.Status, r.Check, r.Replay)
	}
	var events view.EventsResponse
	get(ts.URL+"/api/bundle/idle-duplicate-notification/events?around=138&limit=1", &events)
	e := events.Events[0]
	fmt.Println(e.Seq, e.Kind, e.RPC)
	// Output:
	// idle                         passed                       reproduced
	// idle-duplicate-notification  failed  single-notification  reproduced
	// 138 ws.message Exit Success #14 orchestration.getThreadProjection
}

func get(url string, v any) {
	resp, err := http.Get(url)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		panic(err)
	}
}
