package bundle

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realPayloads are the payloads of recorded bundles (a real T3 0.0.33 run
// with the Codex CLI, the live goldens) and the model requests and
// responses of model/testdata compacted as a client sends them: varied
// bodies for the encoding benchmarks, not one repeated.
func realPayloads(tb testing.TB) (js, other [][]byte) {
	tb.Helper()
	bundles := []string{"../protocol/testdata/codex-t3-idle.zst", "../protocol/testdata/codex-verify-idle.zst", "../fixtures/golden/live/nested.zst", "../fixtures/golden/live/active.zst"}
	for _, path := range bundles {
		c, err := ReadFile(path, nil)
		if err != nil {
			tb.Fatal(err)
		}
		for _, ev := range c.Events {
			if d := ev.Body.Data; len(d) > 0 {
				if json.Valid(d) && bytes.IndexByte(d, '\n') < 0 {
					js = append(js, d)
				} else {
					other = append(other, d)
				}
			}
		}
	}
	files, _ := filepath.Glob("../model/testdata/*/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var c bytes.Buffer
		if json.Compact(&c, b) == nil {
			js = append(js, c.Bytes())
		}
	}
	if len(js) < 100 {
		tb.Fatalf("only %d JSON payloads", len(js))
	}
	return js, other
}

// BenchmarkPayloadEncodingReal runs the writer's payload check over every
// payload of realPayloads, JSON and not, as MB/s of payload.
func BenchmarkPayloadEncodingReal(b *testing.B) {
	js, other := realPayloads(b)
	for _, set := range []struct {
		name string
		ps   [][]byte
		want Encoding
	}{{"json", js, EncodingJSON}, {"other", other, ""}} {
		b.Run(set.name, func(b *testing.B) {
			n := 0
			for _, p := range set.ps {
				n += len(p)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				for _, p := range set.ps {
					if e := payloadEncoding(Payload{Data: p}); set.want != "" && e != set.want {
						b.Fatalf("%s: %.80q", e, p)
					}
				}
			}
		})
	}
}

// BenchmarkPayloadEncodingNumbers: a number-dense body (a table of
// measurements), the scan's hardest JSON.
func BenchmarkPayloadEncodingNumbers(b *testing.B) {
	body := []byte(`{"rows":[` + strings.Repeat(`[1733011200,-12.5,0.0031,42,1e-7,true,null,3.14159265],`, 360))
	body = append(body[:len(body)-1], "]}"...)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if payloadEncoding(Payload{Data: body}) != EncodingJSON {
			b.Fatal("not JSON")
		}
	}
}
