package jsonscan

import (
	"strings"
	"testing"
)

// BenchmarkLongString: the bulk of recorded payloads is long strings.
func BenchmarkLongString(b *testing.B) {
	s := []byte(`"` + strings.Repeat("x", 2000) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, _ := StringEnd(s, 1); end != len(s) {
			b.Fatal(end)
		}
	}
}

// benchBodies are compact JSON of the shapes the proxy records: short
// strings (bench/run.sh's 20 KiB list of threads), numbers (a table of
// measurements), long strings with escapes (a model request).
var benchBodies = []struct{ name, body string }{
	{"threads", `{"threads":[` + strings.TrimSuffix(strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280), ",") + `]}`},
	{"numbers", `{"rows":[` + strings.TrimSuffix(strings.Repeat(`[1733011200,-12.5,0.0031,42,1e-7,true,null,3.14159265],`, 360), ",") + `]}`},
	{"text", `{"model":"m","messages":[` + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":[{"type":"text","text":"`+strings.Repeat(`lorem ipsum \"dolor\" sit amet\n`, 20)+`"}]},`, 30), ",") + `]}`},
}

func BenchmarkValid(b *testing.B) {
	for _, bb := range benchBodies {
		body := []byte(bb.body)
		if !Valid(body) {
			b.Fatalf("%s: not valid", bb.name)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !ValidLine(body) {
					b.Fatal("not valid")
				}
			}
		})
	}
}
