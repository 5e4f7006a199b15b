package wsframe

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want Header
		n    int
		err  string
	}{
		{"text fin unmasked", []byte{0x81, 0x05}, Header{Fin: true, Op: OpText, Length: 5}, 2, ""},
		{"binary masked", []byte{0x82, 0x83, 1, 2, 3, 4}, Header{Fin: true, Op: OpBinary, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: 3}, 6, ""},
		{"compressed first fragment", []byte{0x41, 0x7d}, Header{RSV1: true, Op: OpText, Length: 125}, 2, ""},
		{"16-bit length", []byte{0x82, 126, 0x01, 0x00}, Header{Fin: true, Op: OpBinary, Length: 256}, 4, ""},
		{"64-bit length", []byte{0x82, 127, 0, 0, 0, 0, 0x04, 0, 0, 0}, Header{Fin: true, Op: OpBinary, Length: 64 << 20}, 10, ""},
		{"ping", []byte{0x89, 0x02}, Header{Fin: true, Op: OpPing, Length: 2}, 2, ""},
		{"short", []byte{0x81}, Header{}, 0, ErrShort.Error()},
		{"short 16-bit length", []byte{0x81, 126, 1}, Header{}, 0, ErrShort.Error()},
		{"short mask", []byte{0x81, 0x81, 1, 2}, Header{}, 0, ErrShort.Error()},
		{"16-bit length not shortest", []byte{0x81, 126, 0, 125}, Header{}, 0, "wsframe: payload length 125 not in its shortest form"},
		{"64-bit length not shortest", []byte{0x81, 127, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, Header{}, 0, "wsframe: payload length 65535 not in its shortest form"},
		{"64-bit length top bit", []byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}, Header{}, 0, "wsframe: payload length with its most significant bit set"},
		{"fragmented ping", []byte{0x09, 0x00}, Header{}, 0, "wsframe: fragmented ping frame"},
		{"long close", []byte{0x88, 126, 0, 126}, Header{}, 0, "wsframe: close frame of 126 bytes (at most 125)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, n, err := Parse(c.in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.err {
				t.Fatalf("error %q, want %q", got, c.err)
			}
			if diff := cmp.Diff(c.want, h); diff != "" || n != c.n {
				t.Errorf("Parse = %d bytes (want %d), header (-want +got):\n%s", n, c.n, diff)
			}
		})
	}
}

func TestAppendRoundTrip(t *testing.T) {
	for _, h := range []Header{
		{Fin: true, Op: OpText, Length: 0},
		{Fin: true, Op: OpText, Length: 125},
		{Op: OpBinary, RSV1: true, Length: 126, Masked: true, Mask: [4]byte{9, 8, 7, 6}},
		{Fin: true, Op: OpContinuation, Length: 0xffff},
		{Fin: true, Op: OpBinary, Length: 0x10000, RSV2: true, RSV3: true},
		{Fin: true, Op: OpClose, Length: 2, Masked: true, Mask: [4]byte{1, 1, 1, 1}},
	} {
		b := Append([]byte("x"), h)
		got, n, err := Parse(b[1:])
		if err != nil || n != len(b)-1 {
			t.Fatalf("%+v: Parse = %d bytes, %v; want %d", h, n, err, len(b)-1)
		}
		if diff := cmp.Diff(h, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func maskSlow(b []byte, key [4]byte, pos int64) {
	for i := range b {
		b[i] ^= key[(pos+int64(i))%4]
	}
}

func TestMask(t *testing.T) {
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	src := make([]byte, 100)
	for i := range src {
		src[i] = byte(i * 7)
	}
	for start := range 5 {
		for split := range 20 {
			want := bytes.Clone(src)
			maskSlow(want[start:], key, 0)
			got := bytes.Clone(src)
			pos := Mask(got[start:start+split], key, 0)
			if pos = Mask(got[start+split:], key, pos); pos != int64(len(src)-start) {
				t.Fatalf("position %d after %d bytes", pos, len(src)-start)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("start %d split %d: masked bytes differ from the bytewise reference", start, split)
			}
		}
	}
}

func TestMaskCopy(t *testing.T) {
	key := [4]byte{0x9a, 0x01, 0xfe, 0x33}
	src := make([]byte, 300)
	for i := range src {
		src[i] = byte(i*13 + 5)
	}
	for start := range 9 {
		for _, split := range []int{0, 1, 3, 7, 8, 31, 32, 33, 64, 65, 200} {
			want := bytes.Clone(src)
			maskSlow(want[start:], key, int64(start))
			got := bytes.Clone(src)
			dst := make([]byte, len(src)+10)
			copy(dst, got[:start])
			split := min(start+split, len(src))
			pos := MaskCopy(dst[start:], got[start:split], key, int64(start))
			if pos = MaskCopy(dst[split:], got[split:], key, pos); pos != int64(len(src)) {
				t.Fatalf("position %d after %d bytes", pos, len(src))
			}
			if !bytes.Equal(dst[:len(src)], want) {
				t.Fatalf("start %d split %d: the masked copy differs from the bytewise reference", start, split)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("start %d split %d: MaskCopy changed its source", start, split)
			}
			if !bytes.Equal(dst[len(src):], make([]byte, 10)) {
				t.Fatalf("start %d split %d: MaskCopy wrote past the source's length", start, split)
			}
		}
	}
}

func FuzzMaskCopy(f *testing.F) {
	f.Add([]byte("hello, websocket"), uint32(0x12345678), int64(3))
	f.Add(bytes.Repeat([]byte{0xff}, 100), uint32(1), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, k uint32, pos int64) {
		if pos < 0 {
			pos = -pos
		}
		key := [4]byte{byte(k), byte(k >> 8), byte(k >> 16), byte(k >> 24)}
		want := bytes.Clone(b)
		maskSlow(want, key, pos)
		got := make([]byte, len(b))
		if end := MaskCopy(got, b, key, pos); end != pos+int64(len(b)) {
			t.Fatalf("position %d, want %d", end, pos+int64(len(b)))
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("MaskCopy(%x, %x, %d) = %x, want %x", b, key, pos, got, want)
		}
		Mask(b, key, pos)
		if !bytes.Equal(b, want) {
			t.Fatalf("Mask in place = %x, want %x", b, want)
		}
	})
}

func BenchmarkMaskCopy(b *testing.B) {
	key := [4]byte{1, 2, 3, 4}
	for _, n := range []int{1 << 10, 32 << 10} {
		src, dst := make([]byte, n), make([]byte, n)
		b.Run(fmt.Sprintf("copy-then-mask/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				copy(dst, src)
				Mask(dst, key, 1)
			}
		})
		b.Run(fmt.Sprintf("maskcopy/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for range b.N {
				MaskCopy(dst, src, key, 1)
			}
		})
	}
}

func TestParseClose(t *testing.T) {
	for _, c := range []struct {
		in     []byte
		code   int
		reason string
		err    bool
	}{
		{nil, CloseNoStatus, "", false},
		{[]byte{0x03}, 0, "", true},
		{AppendClose(nil, 4001, "bye"), 4001, "bye", false},
		{AppendClose(nil, 1000, "\xff"), 1000, "\xff", true},
	} {
		code, reason, err := ParseClose(c.in)
		if code != c.code || reason != c.reason || (err != nil) != c.err {
			t.Errorf("ParseClose(%q) = %d %q %v", c.in, code, reason, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte{0x81, 0x05})
	f.Add([]byte{0x82, 127, 0, 0, 0, 0, 0x04, 0, 0, 0})
	f.Add([]byte{0x88, 0x82, 1, 2, 3, 4, 5, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := Parse(b)
		if err != nil {
			if errors.Is(err, ErrShort) && len(b) >= MaxHeader {
				t.Fatalf("ErrShort for %d bytes", len(b))
			}
			return
		}
		if n > len(b) || n > MaxHeader || h.Length < 0 {
			t.Fatalf("Parse(%x) = %+v, %d", b, h, n)
		}
		if enc := Append(nil, h); !bytes.Equal(enc, b[:n]) {
			t.Fatalf("re-encoding %x gives %x", b[:n], enc)
		}
	})
}
