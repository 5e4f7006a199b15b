package bundle

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// benchPayloads are 1 KiB messages of the kinds the proxy records most, 64
// different ones per kind so the compressor sees realistic variety.
var benchPayloads = func() map[string][]Payload {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("thread message delta assistant tool call result chunk request exit success the of and a to in is it that")
	sentence := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()[:n]
	}
	out := map[string][]Payload{}
	for i := range 64 {
		out["json"] = append(out["json"], Text(fmt.Appendf(nil,
			`{"_tag":"Chunk","requestId":"%d","values":[{"type":"thread.message.delta","threadId":"%x","text":%q}]}`,
			i, rng.Uint64(), sentence(900))))
		out["text"] = append(out["text"], Text([]byte(sentence(1000)+"\n\t\"end\"")))
		bin := make([]byte, 1024)
		for j := range bin {
			bin[j] = byte(rng.IntN(16)) // compressible, like most binary frames
		}
		out["binary"] = append(out["binary"], Binary(bin))
	}
	return out
}()

func BenchmarkAppend(b *testing.B) {
	for _, enc := range []string{"json", "text", "binary"} {
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression} {
			b.Run(enc+"/"+level.String(), func(b *testing.B) {
				var out countingWriter
				w, err := NewWriter(&out, Header{}, &WriterOptions{Level: level, FlushInterval: time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				ps := benchPayloads[enc]
				b.SetBytes(int64(len(ps[0].Data)))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					ev := Event{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: ps[i%len(ps)]}
					if _, err := w.Append(&ev); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(out.n)/float64(b.N), "zbytes/op")
			})
		}
	}
}

func BenchmarkReaderNext(b *testing.B) {
	for _, enc := range []string{"json", "text", "binary"} {
		b.Run(enc, func(b *testing.B) {
			const n = 20000
			var file bytes.Buffer
			w, err := NewWriter(&file, Header{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			ps := benchPayloads[enc]
			for i := range n {
				if _, err := w.Append(&Event{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: ps[i%len(ps)]}); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
			data := file.Bytes()
			b.SetBytes(int64(len(ps[0].Data)))
			b.ReportAllocs()
			var r *Reader
			var ev Event
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					if r != nil {
						r.Close()
					}
					if r, err = NewReader(bytes.NewReader(data), nil); err != nil {
						b.Fatal(err)
					}
				}
				if err := r.Next(&ev); err != nil && err != io.EOF {
					b.Fatal(err)
				}
			}
			r.Close()
		})
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkReaderHugeLines reads a run of 16 MiB JSON messages, lines that
// span frames and are assembled: one buffer serves the run (B/op stays near
// nothing once it has grown) instead of a new one grown for every line.
func BenchmarkReaderHugeLines(b *testing.B) {
	item := []byte(`{"id":"thr_0123456789","title":"a background task","state":"running","messages":12},`)
	body := append([]byte(`{"threads":[`), bytes.Repeat(item, (16<<20)/len(item))...)
	body = append(body, `{}]}`...)
	var file bytes.Buffer
	w, err := NewWriter(&file, Header{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	const n = 8
	for range n {
		if _, err := w.Append(&Event{Kind: KindWSMessage, Conn: "ws1", Dir: DirClientToServer, Type: TypeText, Body: Text(body)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n * int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(file.Bytes()), nil)
		if err != nil {
			b.Fatal(err)
		}
		var ev Event
		for i := 0; ; i++ {
			if err := r.Next(&ev); err == io.EOF {
				if i != n {
					b.Fatalf("%d events, want %d", i, n)
				}
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}
