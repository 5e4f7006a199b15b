package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/record"
)

// redactRequest is a request as the proxy hands it to the recorder: headers,
// a URL with a query and a 20 KiB JSON body that holds no secret but is full
// of what a secret's spellings start with (%, \, +, \u escapes).
func redactRequest() bundle.Event {
	var body strings.Builder
	body.WriteString("[")
	for i := 0; body.Len() < 20<<10; i++ {
		fmt.Fprintf(&body, `{"type":"thread.message.delta","sequence":%d,"delta":"lorem ipsum dolor sit amet \u00e9 50%% + more","path":"C:\\Users\\x"},`, i)
	}
	body.WriteString("{}]")
	return bundle.Event{
		Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "POST", URL: "/api/orchestration/threads/t-1?cursor=abc%2Fdef&limit=50",
		Header: http.Header{"Content-Type": {"application/json"}, "User-Agent": {"wireproof-bench/1"}, "Accept": {"*/*"}},
		Body:   bundle.Text([]byte(body.String())),
	}
}

// BenchmarkRedactSecrets records one request with 1, 100 and 2,000 --redact
// values (each also redacted in its base64 spellings): what each request
// costs the recorder. bench/ratios prints the others against the first.
func BenchmarkRedactSecrets(b *testing.B) {
	for _, n := range []int{1, 100, 2000} {
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			secrets := make([]string, n)
			for i := range secrets {
				secrets[i] = fmt.Sprintf("sk-%04d-%x", i, uint64(i)*0x9e3779b97f4a7c15)
			}
			rec := record.New(nil, &record.Options{Redact: secrets})
			defer rec.Close()
			// Two requests that differ in their body's last object, in
			// turn: neither is taken from the redactor's memo of a text
			// searched just before (redact/memo.go), so each is searched.
			in := [2]bundle.Event{redactRequest(), redactRequest()}
			in[1].Body.Data = bytes.Replace(bytes.Clone(in[1].Body.Data), []byte("{}]"), []byte("[]]"), 1)
			b.SetBytes(int64(len(in[0].Body.Data)))
			i := 0
			for b.Loop() {
				ev := in[i&1]
				i++
				if _, err := rec.Emit(&ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
