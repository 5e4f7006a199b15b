package testkit

import (
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Decompress returns the NDJSON of the bundle at path, whole, as a search
// for a secret on disk must see it. It fails the test if the file cannot
// be read or decompressed.
func Decompress(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	raw, err := io.ReadAll(dec)
	if err != nil {
		t.Fatalf("decompressing %s: %v", path, err)
	}
	return raw
}
