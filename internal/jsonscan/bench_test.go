package jsonscan

import (
	"encoding/json"
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

// rpcFrame is an Effect RPC chunk of one orchestration event, as T3 sends
// them over its socket: uuids, timestamps, nulls, a short text.
const rpcFrame = `{"_tag":"Chunk","requestId":"17","values":[{"sequence":1234,"eventId":"5b0e7c1a-2f7d-4c55-9a43-0f5c0e1f9d21","aggregateKind":"thread","aggregateId":"9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b","occurredAt":"2026-12-01T15:35:58.226Z","commandId":null,"causationEventId":null,"correlationId":"711e725e-a7fb-40a2-b2cd-6c90bf07e03e","metadata":{},"type":"thread.message-sent","payload":{"threadId":"9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b","messageId":"msg_01HXYZ","role":"assistant","text":"I'll look at that file now and tell you what it does.","turnId":"turn_3","streaming":true,"attachments":[],"createdAt":"2026-12-01T15:35:58.226Z","updatedAt":"2026-12-01T15:35:58.226Z"}}]}`

// benchBodies are compact JSON of the shapes the proxy records: short
// strings (bench/internal/ends.JSONBody, the 20 KiB list of threads the
// HTTP figure relays), an Effect RPC frame, a model stream's SSE data
// line, numbers (a table of measurements), long strings with escapes (a
// model request) and a large message of long strings (a file's contents).
var benchBodies = []struct{ name, body string }{
	{"threads", `{"threads":[` + strings.TrimSuffix(strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280), ",") + `]}`},
	{"rpc", rpcFrame},
	{"sse", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello! How can I help"}}`},
	{"numbers", `{"rows":[` + strings.TrimSuffix(strings.Repeat(`[1733011200,-12.5,0.0031,42,1e-7,true,null,3.14159265],`, 360), ",") + `]}`},
	{"text", `{"model":"m","messages":[` + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":[{"type":"text","text":"`+strings.Repeat(`lorem ipsum \"dolor\" sit amet\n`, 20)+`"}]},`, 30), ",") + `]}`},
	{"long", `{"files":[` + strings.TrimSuffix(strings.Repeat(`{"path":"src/main.go","content":"`+strings.Repeat(`func main() { fmt.Println(\"héllo, wörld\") }\n`, 1400)+`"},`, 16), ",") + `]}`},
}

// BenchmarkValid is the writer's check (ValidLine) of each body, and
// encoding/json.Valid of the same body beside it as the baseline.
func BenchmarkValid(b *testing.B) {
	for _, bb := range benchBodies {
		body := []byte(bb.body)
		if !json.Valid(body) || !ValidLine(body) {
			b.Fatalf("%s: not valid", bb.name)
		}
		b.Run(bb.name+"/jsonscan", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !ValidLine(body) {
					b.Fatal("not valid")
				}
			}
		})
		b.Run(bb.name+"/encoding_json", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !json.Valid(body) {
					b.Fatal("not valid")
				}
			}
		})
	}
}
