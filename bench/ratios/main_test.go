package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    results
		wantErr string
	}{
		{
			name: "figures on the name's line",
			in: "goos: linux\n" +
				"BenchmarkWSOneWay/direct-2   \t  161128\t      8260 ns/op\t 123.97 MB/s\n" +
				"BenchmarkCompression/unique-2 \t 19\t 56589221 ns/op\t 6.800 ratio\n" +
				"PASS\n",
			want: results{
				"BenchmarkWSOneWay/direct":    {{"ns/op": 8260, "MB/s": 123.97}},
				"BenchmarkCompression/unique": {{"ns/op": 56589221, "ratio": 6.8}},
			},
		},
		{
			name: "a child's stderr between the name and its figures",
			in: "BenchmarkWSBig/direct-2 \t 12\t 129294926 ns/op\t 519.04 MB/s\n" +
				"wireproof: recording http://127.0.0.1:41349 -> http://127.0.0.1:34471 into /tmp/x/big.zst\n" +
				"BenchmarkWSBig/recorded-2 \twireproof: recording http://127.0.0.1:46453 -> http://127.0.0.1:34471 into /tmp/y/big.zst\n" +
				"wireproof: recording http://127.0.0.1:36591 -> http://127.0.0.1:34471 into /tmp/z/big.zst\n" +
				"       3\t 446674596 ns/op\t 150.24 MB/s\t 164.7 peak-MiB\t 2.573 peak-x\n",
			want: results{
				"BenchmarkWSBig/direct":   {{"ns/op": 129294926, "MB/s": 519.04}},
				"BenchmarkWSBig/recorded": {{"ns/op": 446674596, "MB/s": 150.24, "peak-MiB": 164.7, "peak-x": 2.573}},
			},
		},
		{
			name: "rounds in the order they ran",
			in: "BenchmarkWSEcho/direct-2 \t 1\t 1 ns/op\t 30000 p50-ns\n" +
				"BenchmarkWSEcho/recorded-2 \t 1\t 1 ns/op\t 80000 p50-ns\n" +
				"PASS\nok  \tgithub.com/wireproof/wireproof/bench\t1.0s\n" +
				"BenchmarkWSEcho/direct-2 \t 1\t 1 ns/op\t 31000 p50-ns\n" +
				"BenchmarkWSEcho/recorded-2 \t 1\t 1 ns/op\t 95000 p50-ns\n",
			want: results{
				"BenchmarkWSEcho/direct":   {{"ns/op": 1, "p50-ns": 30000}, {"ns/op": 1, "p50-ns": 31000}},
				"BenchmarkWSEcho/recorded": {{"ns/op": 1, "p50-ns": 80000}, {"ns/op": 1, "p50-ns": 95000}},
			},
		},
		{
			name: "a failed round's name, then the next round",
			in: "goos: linux\n" +
				"BenchmarkWSBig/direct-2 \t 3\t 1 ns/op\t 500 MB/s\n" +
				"BenchmarkWSBig/recorded-2 \t--- FAIL: BenchmarkWSBig/recorded\n" +
				"goos: linux\n" +
				"BenchmarkWSBig/direct-2 \t 3\t 1 ns/op\t 510 MB/s\n" +
				"BenchmarkWSBig/recorded-2 \t 3\t 4 ns/op\t 150 MB/s\n",
			want: results{
				"BenchmarkWSBig/direct":   {{"ns/op": 1, "MB/s": 500}, {"ns/op": 1, "MB/s": 510}},
				"BenchmarkWSBig/recorded": {nil, {"ns/op": 4, "MB/s": 150}},
			},
			wantErr: "BenchmarkWSBig/recorded: no figures found after its name",
		},
		{
			name: "a benchmark missing from the first rounds",
			in: "goos: linux\nBenchmarkA-2 \t 1\t 1 ns/op\n" +
				"goos: linux\nBenchmarkA-2 \t 1\t 2 ns/op\n" +
				"goos: linux\nBenchmarkA-2 \t 1\t 3 ns/op\nBenchmarkB-2 \t 1\t 4 ns/op\n",
			want: results{
				"BenchmarkA": {{"ns/op": 1}, {"ns/op": 2}, {"ns/op": 3}},
				"BenchmarkB": {nil, nil, {"ns/op": 4}},
			},
		},
		{
			name:    "a name whose figures never come",
			in:      "BenchmarkWSBig/recorded-2 \t--- FAIL: BenchmarkWSBig/recorded\n",
			want:    results{},
			wantErr: "BenchmarkWSBig/recorded: no figures found after its name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(strings.NewReader(tt.in))
			if gotErr := errString(err); gotErr != tt.wantErr {
				t.Fatalf("error %q, want %q", gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parse (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		in   []float64
		want spread
	}{
		{[]float64{3}, spread{3, 3, 3}},
		{[]float64{5, 1, 4, 2, 3}, spread{3, 1, 5}},
		{[]float64{4, 1, 3, 2}, spread{2.5, 1, 4}},
		{[]float64{0.9, 0.1, 0.9, 0.9, 0.9}, spread{0.9, 0.1, 0.9}},
	}
	for _, tt := range tests {
		in := fmt.Sprint(tt.in)
		if diff := cmp.Diff(tt.want, spreadOf(tt.in), cmp.AllowUnexported(spread{})); diff != "" {
			t.Errorf("spreadOf(%s) (-want +got):\n%s", in, diff)
		}
		if got := fmt.Sprint(tt.in); got != in {
			t.Errorf("spreadOf changed its input: %s, was %s", got, in)
		}
	}
}

// rounds makes n rounds of one benchmark's metric.
func rounds(metric string, vs ...float64) []map[string]float64 {
	var rs []map[string]float64
	for _, v := range vs {
		rs = append(rs, map[string]float64{metric: v})
	}
	return rs
}

func TestJudge(t *testing.T) {
	oneWay := line{name: "one-way", bench: "B/recorded", baseBench: "B/direct", metric: "MB/s", higherIsBetter: true, target: 0.8, unit: "MB/s"}
	echo := line{name: "echo", bench: "E/recorded", baseBench: "E/direct", metric: "p50-ns", atMost: true, target: 3, unit: "ns"}
	peak := line{name: "peak", bench: "P/recorded", metric: "peak-x", atMost: true, target: 3, unit: "x"}
	latency := line{name: "latency", bench: "L/recorded", baseBench: "L/direct", metric: "ns", target: 0.5, unit: "ns"}
	ref := line{name: "ref", bench: "B/recorded", baseBench: "B/direct", metric: "MB/s", higherIsBetter: true, unit: "MB/s"}
	direct := rounds("MB/s", 100, 100, 100, 100, 100)
	tests := []struct {
		name   string
		line   line
		res    results
		result string
		ratio  spread
		rounds int
	}{
		{
			name:   "every round over the target: ok",
			line:   oneWay,
			res:    results{"B/direct": direct, "B/recorded": rounds("MB/s", 90, 85, 95, 81, 99)},
			result: resultOK, ratio: spread{0.9, 0.81, 0.99}, rounds: 5,
		},
		{
			name: "ratios are taken round by round, not of the medians",
			line: oneWay,
			// The medians (100 and 100) would give 1.0; round by round the
			// recorded way is at half of its direct neighbour three times.
			res:    results{"B/direct": rounds("MB/s", 200, 200, 200, 50, 100), "B/recorded": rounds("MB/s", 100, 100, 100, 100, 200)},
			result: resultMissed, ratio: spread{0.5, 0.5, 2}, rounds: 5,
		},
		{
			name:   "median over, one round under: unsteady",
			line:   oneWay,
			res:    results{"B/direct": direct, "B/recorded": rounds("MB/s", 90, 85, 79, 81, 99)},
			result: resultUnsteady, ratio: spread{0.85, 0.79, 0.99}, rounds: 5,
		},
		{
			name:   "median under: missed",
			line:   oneWay,
			res:    results{"B/direct": direct, "B/recorded": rounds("MB/s", 50, 60, 79, 81, 99)},
			result: resultMissed, ratio: spread{0.79, 0.5, 0.99}, rounds: 5,
		},
		{
			name:   "a round exactly at the target meets it",
			line:   oneWay,
			res:    results{"B/direct": direct, "B/recorded": rounds("MB/s", 80, 80, 80, 80, 80)},
			result: resultOK, ratio: spread{0.8, 0.8, 0.8}, rounds: 5,
		},
		{
			name:   "a cost under its ceiling in every round: ok",
			line:   echo,
			res:    results{"E/direct": rounds("p50-ns", 10, 10, 10, 10, 10), "E/recorded": rounds("p50-ns", 20, 25, 30, 22, 21)},
			result: resultOK, ratio: spread{2.2, 2, 3}, rounds: 5,
		},
		{
			name:   "a cost whose spread crosses its ceiling: unsteady",
			line:   echo,
			res:    results{"E/direct": rounds("p50-ns", 10, 10, 10, 10, 10), "E/recorded": rounds("p50-ns", 20, 25, 31, 22, 21)},
			result: resultUnsteady, ratio: spread{2.2, 2, 3.1}, rounds: 5,
		},
		{
			name:   "a cost whose median is over its ceiling: missed",
			line:   echo,
			res:    results{"E/direct": rounds("p50-ns", 10, 10, 10, 10, 10), "E/recorded": rounds("p50-ns", 40, 25, 31, 32, 21)},
			result: resultMissed, ratio: spread{3.1, 2.1, 4}, rounds: 5,
		},
		{
			name:   "an absolute figure is its own ratio",
			line:   peak,
			res:    results{"P/recorded": rounds("peak-x", 2.5, 2.5, 2.5, 2.5, 2.5)},
			result: resultOK, ratio: spread{2.5, 2.5, 2.5}, rounds: 5,
		},
		{
			name:   "lower is better: baseline over measured",
			line:   latency,
			res:    results{"L/direct": rounds("ns", 10, 10, 10, 10, 10), "L/recorded": rounds("ns", 40, 40, 40, 40, 40)},
			result: resultMissed, ratio: spread{0.25, 0.25, 0.25}, rounds: 5,
		},
		{
			name:   "no target: reference, whatever the spread",
			line:   ref,
			res:    results{"B/direct": direct, "B/recorded": rounds("MB/s", 10, 500, 100, 100, 100)},
			result: resultRef, ratio: spread{1, 0.1, 5}, rounds: 5,
		},
		{
			name:   "fewer than 5 rounds is not met, however good",
			line:   oneWay,
			res:    results{"B/direct": direct[:4], "B/recorded": rounds("MB/s", 100, 100, 100, 100, 100)},
			result: resultMissing, ratio: spread{1, 1, 1}, rounds: 4,
		},
		{
			name: "a round the figure failed in is left out, not shifted against the next baseline",
			line: oneWay,
			res: results{
				"B/direct":   rounds("MB/s", 100, 1000, 100, 100, 100, 100),
				"B/recorded": append([]map[string]float64{{"MB/s": 90}, nil}, rounds("MB/s", 90, 90, 90, 90)...),
			},
			result: resultOK, ratio: spread{0.9, 0.9, 0.9}, rounds: 5,
		},
		{
			name:   "no baseline",
			line:   oneWay,
			res:    results{"B/recorded": rounds("MB/s", 100, 100, 100, 100, 100)},
			result: resultMissing, rounds: 0,
		},
		{
			name:   "no figure",
			line:   oneWay,
			res:    results{},
			result: resultMissing, rounds: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(tt.line, tt.res)
			if r.result != tt.result || r.rounds != tt.rounds {
				t.Errorf("judge: %s over %d rounds, want %s over %d (%s)", r.result, r.rounds, tt.result, tt.rounds, r.text())
			}
			approx := cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })
			if diff := cmp.Diff(tt.ratio, r.ratio, cmp.AllowUnexported(spread{}), approx); diff != "" {
				t.Errorf("ratio spread (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReport(t *testing.T) {
	// One round of every benchmark the table names, with every figure at
	// its target, five times over: all met. Then one round of the echo
	// slower than its ceiling: the report says not all were met.
	figures := map[string]map[string]float64{}
	set := func(b, metric string, v float64) {
		if figures[b] == nil {
			figures[b] = map[string]float64{}
		}
		if _, ok := figures[b][metric]; !ok {
			figures[b][metric] = v
		}
	}
	for _, l := range lines {
		if l.target == 0 {
			continue
		}
		v := l.target // an absolute figure
		if l.baseBench != "" {
			set(l.baseBench, l.metric, 1000)
			v = 1000 * l.target
		}
		set(l.bench, l.metric, v)
	}
	for _, l := range lines { // references: whatever the lines with targets left
		set(l.bench, l.metric, 1000)
		if l.baseBench != "" {
			set(l.baseBench, l.metric, 1000)
		}
	}
	var in strings.Builder
	for range 5 {
		for _, b := range slices.Sorted(maps.Keys(figures)) {
			fmt.Fprintf(&in, "%s-2 \t 1", b)
			for _, m := range slices.Sorted(maps.Keys(figures[b])) {
				fmt.Fprintf(&in, "\t %g %s", figures[b][m], m)
			}
			in.WriteString("\n")
		}
	}
	res, err := parse(strings.NewReader(in.String()))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if !report(&out, res) {
		t.Fatalf("report of figures at their targets: not all met\n%s", out.String())
	}
	res["BenchmarkWSEcho/recorded"][2]["p50-ns"] = 1e9
	out.Reset()
	if report(&out, res) {
		t.Fatalf("report with an echo round over its ceiling: all met\n%s", out.String())
	}
	if !strings.Contains(out.String(), "unsteady") {
		t.Errorf("report does not call the echo unsteady:\n%s", out.String())
	}
}
