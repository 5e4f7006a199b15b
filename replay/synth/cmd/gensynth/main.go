// Command gensynth writes one synthetic bundle (see package synth), with the
// live verdict recorded, and prints its uncompressed size in bytes. The replay
// benchmark (bench/replay.sh) uses it to make a large projection-heavy bundle.
//
//	go run ./replay/synth/cmd/gensynth -scenario idle -polls 2000 -filler 40 -filler-bytes 2000 -o big.zst
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay/synth"
)

func main() {
	var o synth.Options
	out := flag.String("o", "", "bundle to write (must not exist)")
	scenario := flag.String("scenario", string(assert.ScenarioIdle), "idle, active, native or nested")
	flag.StringVar(&o.Fault, "fault", "", "a fault to inject (empty: a passing run)")
	flag.IntVar(&o.Polls, "polls", 0, "extra observations in the middle of the run")
	flag.IntVar(&o.Filler, "filler", 0, "extra turn items per projection")
	flag.IntVar(&o.FillerBytes, "filler-bytes", 0, "text bytes per extra turn item")
	flag.BoolVar(&o.NDJSON, "ndjson", false, "ndjson framing")
	flag.Parse()
	o.Scenario = assert.Scenario(*scenario)
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gensynth: -o is required")
		os.Exit(2)
	}
	s, err := synth.Build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(2)
	}
	events, err := synth.Recorded(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(1)
	}
	if err := synth.WriteBundle(*out, events); err != nil {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(1)
	}
	var size int64
	var line []byte
	for i := range events {
		line = bundle.AppendEvent(line[:0], &events[i])
		size += int64(len(line)) + 1
	}
	fmt.Println(size)
}
