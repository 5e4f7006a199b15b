// Command ratios reads `go test -bench` output from ./bench on stdin and prints
// each measured figure against its baseline from the same run:
//
//	name  measured  baseline  ratio  target  ok|below
//
// It exits 1 if a figure misses its target (a ratio below it, or a cost
// above it), so CI can gate on it.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// results maps "BenchmarkX/sub" to its metrics ("ns/op", "MB/s", "p50-ns", ...).
type results map[string]map[string]float64

// parse reads go test -bench output. A benchmark's figures normally follow
// its name on the same line, but anything the benchmark (or a child process
// it runs) prints to the same terminal lands between the two: a name whose
// figures are missing is kept until a line that is only figures (it begins
// with the iteration count) follows, and lines that are neither are skipped.
func parse(r io.Reader) (results, error) {
	res := results{}
	pending := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		name := ""
		if strings.HasPrefix(f[0], "Benchmark") {
			name, f = benchName(f[0]), f[1:]
		}
		m, ok := metrics(f)
		switch {
		case ok && name != "":
			res[name], pending = m, ""
		case ok && pending != "":
			res[pending], pending = m, ""
		case name != "":
			pending = name
		}
	}
	if pending != "" {
		return res, fmt.Errorf("%s: no figures found after its name", pending)
	}
	return res, sc.Err()
}

// benchName drops the GOMAXPROCS suffix of a benchmark's name.
func benchName(s string) string {
	if i := strings.LastIndex(s, "-"); i > 0 {
		if _, err := strconv.Atoi(s[i+1:]); err == nil {
			return s[:i]
		}
	}
	return s
}

// metrics parses "N  v1 unit1  v2 unit2 ...", the figures of a benchmark; ok
// is false if f is not that.
func metrics(f []string) (map[string]float64, bool) {
	if len(f) < 3 || len(f)%2 == 0 {
		return nil, false
	}
	if _, err := strconv.ParseInt(f[0], 10, 64); err != nil {
		return nil, false
	}
	m := map[string]float64{}
	for i := 1; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, false
		}
		m[f[i+1]] = v
	}
	return m, true
}

// line is one printed comparison. higherIsBetter says which way the ratio
// goes: for throughput and compression measured/baseline, for latency
// baseline/measured, so a ratio of 1 always means "as good as the baseline".
// An atMost line is a cost instead (a slowdown, a memory multiple): its ratio
// is measured/baseline and its target the most it may be.
type line struct {
	name           string
	bench, metric  string
	baseBench      string // "" for an absolute figure (baseline 1)
	higherIsBetter bool
	atMost         bool
	target         float64 // 0: no target, printed for reference
	unit           string
}

var lines = []line{
	{name: "ws 1KiB one-way, recorded vs direct", bench: "BenchmarkWSOneWay/recorded", baseBench: "BenchmarkWSOneWay/direct", metric: "MB/s", higherIsBetter: true, target: 0.80, unit: "MB/s"},
	{name: "ws 1KiB one-way, plain relay vs direct (reference)", bench: "BenchmarkWSOneWay/relay", baseBench: "BenchmarkWSOneWay/direct", metric: "MB/s", higherIsBetter: true, unit: "MB/s"},
	{name: "ws 1KiB one-way, recorded vs plain relay (reference)", bench: "BenchmarkWSOneWay/recorded", baseBench: "BenchmarkWSOneWay/relay", metric: "MB/s", higherIsBetter: true, unit: "MB/s"},
	{name: "ws 1KiB one-way busy client, recorded vs direct (ref)", bench: "BenchmarkWSOneWay/recorded", baseBench: "BenchmarkWSOneWay/direct", metric: "busy-MB/s", higherIsBetter: true, unit: "MB/s"},
	{name: "ws 1KiB one-way busy client, relay vs direct (ref)", bench: "BenchmarkWSOneWay/relay", baseBench: "BenchmarkWSOneWay/direct", metric: "busy-MB/s", higherIsBetter: true, unit: "MB/s"},
	{name: "ws echo p50, recorded/direct (slowdown)", bench: "BenchmarkWSEcho/recorded", baseBench: "BenchmarkWSEcho/direct", metric: "p50-ns", atMost: true, target: 3, unit: "ns"},
	{name: "ws echo p99, recorded/direct (slowdown)", bench: "BenchmarkWSEcho/recorded", baseBench: "BenchmarkWSEcho/direct", metric: "p99-ns", atMost: true, target: 4, unit: "ns"},
	{name: "ws 64MiB one-way, recorded vs direct", bench: "BenchmarkWSBig/recorded", baseBench: "BenchmarkWSBig/direct", metric: "MB/s", higherIsBetter: true, target: 0.5, unit: "MB/s"},
	{name: "ws 64MiB, proxy peak memory / message size", bench: "BenchmarkWSBig/recorded", metric: "peak-x", atMost: true, target: 3, unit: "x"},
	{name: "http 20KiB json x8, recorded vs ReverseProxy", bench: "BenchmarkHTTPJSON/recorded", baseBench: "BenchmarkHTTPJSON/reverseproxy", metric: "MB/s", higherIsBetter: true, target: 0.8, unit: "MB/s"},
	{name: "http 1GiB streamed response, recorded vs direct", bench: "BenchmarkHTTPStream/recorded", baseBench: "BenchmarkHTTPStream/direct", metric: "MB/s", higherIsBetter: true, target: 0.6, unit: "MB/s"},
	{name: "http 1GiB streamed response, 64 MiB / peak heap", bench: "BenchmarkHTTPStream/recorded", metric: "budget-ratio", higherIsBetter: true, target: 1, unit: "x"},
	{name: "playback ws 1KiB echo msgs/s, playback vs direct", bench: "BenchmarkPlaybackWS/playback", baseBench: "BenchmarkPlaybackWS/direct", metric: "msgs/s", higherIsBetter: true, target: 0.4, unit: "msg/s"},
	{name: "playback http 20KiB json x8 req/s, playback vs direct", bench: "BenchmarkPlaybackHTTP/playback", baseBench: "BenchmarkPlaybackHTTP/direct", metric: "req/s", higherIsBetter: true, target: 0.5, unit: "req/s"},
	{name: "redaction per request, 100 secrets vs 1 (cost)", bench: "BenchmarkRedactSecrets/secrets=100", baseBench: "BenchmarkRedactSecrets/secrets=1", metric: "ns/op", atMost: true, target: 2, unit: "ns"},
	{name: "redaction per request, 2000 secrets vs 1 (cost)", bench: "BenchmarkRedactSecrets/secrets=2000", baseBench: "BenchmarkRedactSecrets/secrets=1", metric: "ns/op", atMost: true, target: 2, unit: "ns"},
	{name: "compression, projection-heavy stream", bench: "BenchmarkCompression/projection", metric: "ratio", higherIsBetter: true, target: 100, unit: "x"},
	{name: "compression, unique small messages", bench: "BenchmarkCompression/unique", metric: "ratio", higherIsBetter: true, target: 5, unit: "x"},
}

func main() {
	res, err := parse(os.Stdin)
	if err != nil {
		// A benchmark without figures shows as missing below (and fails);
		// the others are still compared.
		fmt.Fprintln(os.Stderr, "ratios:", err)
	}
	below := false
	fmt.Printf("%-54s %14s %14s %8s %8s  %s\n", "name", "measured", "baseline", "ratio", "target", "result")
	for _, l := range lines {
		got, ok := res[l.bench][l.metric]
		if !ok {
			fmt.Printf("%-54s %14s\n", l.name, "missing")
			below = true
			continue
		}
		base, baseStr := 1.0, "-"
		if l.baseBench != "" {
			b, ok := res[l.baseBench][l.metric]
			if !ok || b == 0 {
				fmt.Printf("%-54s %14s\n", l.name, "no baseline")
				below = true
				continue
			}
			base, baseStr = b, fmt.Sprintf("%.1f %s", b, l.unit)
		}
		ratio := got / base
		if !l.higherIsBetter && !l.atMost {
			ratio = base / got
		}
		target, result := "-", "ref"
		switch {
		case l.target > 0 && l.atMost:
			target = fmt.Sprintf("<=%.2f", l.target)
			result = "ok"
			if ratio > l.target {
				result = "above"
				below = true
			}
		case l.target > 0:
			target = fmt.Sprintf("%.2f", l.target)
			result = "ok"
			if ratio < l.target {
				result = "below"
				below = true
			}
		}
		fmt.Printf("%-54s %14s %14s %8.2f %8s  %s\n", l.name, fmt.Sprintf("%.1f %s", got, l.unit), baseStr, ratio, target, result)
	}
	if below {
		os.Exit(1)
	}
}
