package filter_test

import (
	"fmt"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/filter"
)

// Parse an expression once, then give it each event in order through a
// Tracker, which adds what the event's exchange or connection says of it.
func Example() {
	expr, err := filter.Parse(`~k ws.message & ~dir s2c & ~j values.*.type=notification`)
	if err != nil {
		panic(err)
	}
	tr := filter.NewTracker()
	for _, ev := range []*bundle.Event{
		{Seq: 1, Kind: bundle.KindWSOpen, Conn: "ws1", URL: "ws://127.0.0.1:9/ws"},
		{Seq: 2, Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"_tag":"Chunk","values":[{"type":"message"}]}`))},
		{Seq: 3, Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"_tag":"Chunk","values":[{"type":"notification"}]}`))},
	} {
		s := tr.Subject(ev)
		if expr.Match(&s) {
			fmt.Println("seq", ev.Seq, "on", s.URL)
		}
	}
	_, err = filter.Parse("~c 4xx | (~b")
	fmt.Println(err)
	// Output:
	// seq 3 on ws://127.0.0.1:9/ws
	// filter "~c 4xx | (~b": column 13: expected a regular expression after ~b, found the end of the expression
}
