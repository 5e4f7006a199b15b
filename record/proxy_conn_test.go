package record

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// TestCorkedConn writes more than corkMax in small writes (so Write must wait
// for the flusher) and closes at once: the peer must read every byte, in
// order, and then EOF.
func TestCorkedConn(t *testing.T) {
	checkNoStray(t, "record.(*corkedConn)")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := newCorkedConn(raw)
	var want bytes.Buffer
	chunk := make([]byte, 1000)
	for i := range 3 * corkMax / len(chunk) {
		for j := range chunk {
			chunk[j] = byte(i + j)
		}
		want.Write(chunk)
		if n, err := c.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Errorf("peer read %d bytes, want the %d written, in order", len(b), want.Len())
	}
	if _, err := c.Write([]byte("late")); err == nil {
		t.Error("Write after Close succeeded")
	}
}
