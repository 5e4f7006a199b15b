package bundle_test

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/wireproof/wireproof/bundle"
)

// A recorder appends events as they happen; Close writes the trailer.
func ExampleWriter() {
	var file bytes.Buffer
	var now int64
	w, err := bundle.NewWriter(&file, bundle.Header{Tool: "wireproof example"}, &bundle.WriterOptions{
		Clock: func() int64 { now += int64(time.Millisecond); return now },
	})
	if err != nil {
		panic(err)
	}
	seq, _ := w.Append(&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"})
	fmt.Println("ws.open is seq", seq)
	seq, _ = w.Append(&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer,
		Type: bundle.TypeText, Body: bundle.Text([]byte(`{"_tag":"Ping"}`))})
	fmt.Println("ws.message is seq", seq)
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Println("events:", w.Count())

	// The line of an event, as it is stored:
	ev := bundle.Event{Seq: 2, T: 2000000, Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer,
		Type: bundle.TypeText, Body: bundle.Text([]byte(`{"_tag":"Ping"}`))}
	fmt.Println(string(bundle.AppendEvent(nil, &ev)))
	// Output:
	// ws.open is seq 1
	// ws.message is seq 2
	// events: 2
	// {"seq":2,"t":2000000,"kind":"ws.message","conn":"ws1","dir":"c2s","type":"text","json":{"_tag":"Ping"}}
}

// A replayer reads events in order until io.EOF, then asks whether the
// bundle was cut short.
func ExampleReader() {
	var file bytes.Buffer
	w, _ := bundle.NewWriter(&file, bundle.Header{Tool: "wireproof example"}, nil)
	w.Append(&bundle.Event{Kind: bundle.KindProcStart, Conn: "server"})
	w.Append(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStderr,
		Body: bundle.Text([]byte("startup phase: complete"))})
	w.Close()

	r, err := bundle.NewReader(&file, nil)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	fmt.Println("tool:", r.Header().Tool, "format:", r.Header().Format)
	var ev bundle.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s %s %q\n", ev.Seq, ev.Kind, ev.Conn, ev.Body.Data)
	}
	fmt.Println("truncated:", r.Truncated(), "trailer events:", r.Trailer().Events)
	// Output:
	// tool: wireproof example format: 2
	// 1 proc.start server ""
	// 2 proc.log server "startup phase: complete"
	// truncated: false trailer events: 3
}

// A range loop reads the events in order; the loop ends at the trailer, or
// after the last complete line of a bundle cut short (then Truncated says
// so). Any other error is yielded once, and ends the loop.
func ExampleReader_All() {
	var file bytes.Buffer
	w, _ := bundle.NewWriter(&file, bundle.Header{Tool: "wireproof example"}, nil)
	w.Append(&bundle.Event{Kind: bundle.KindProcStart, Conn: "server"})
	w.Append(&bundle.Event{Kind: bundle.KindProcExit, Conn: "server", Code: 0})
	w.Close()

	r, err := bundle.NewReader(&file, nil)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for ev, err := range r.All() {
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Seq, ev.Kind, ev.Conn)
	}
	fmt.Println("truncated:", r.Truncated())
	// Output:
	// 1 proc.start server
	// 2 proc.exit server
	// truncated: false
}
