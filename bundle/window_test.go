package bundle_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
)

// TestWindowAboveCap: a bundle whose zstd frame declares a window above the
// reader's cap is refused as such, not called corrupt.
func TestWindowAboveCap(t *testing.T) {
	var buf bytes.Buffer
	w, err := bundle.NewWriter(&buf, bundle.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(&bundle.Event{Kind: bundle.KindMark, Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if b[4]&0x20 != 0 {
		t.Fatal("the Writer wrote a single-segment frame; this test patches a window descriptor")
	}
	for _, tc := range []struct {
		name string
		wd   byte // window descriptor: exponent<<3 | mantissa, window 2^(10+exp) * (1+mantissa/8)
		want string
	}{
		{"128 MiB", 17 << 3, "window (128 MiB) is above this reader's cap of 64 MiB"},
		{"72 MiB", 16<<3 | 1, "window (72 MiB) is above this reader's cap of 64 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patched := bytes.Clone(b)
			patched[5] = tc.wd
			p := filepath.Join(t.TempDir(), "wide.zst")
			if err := os.WriteFile(p, patched, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := bundle.ReadFile(p, nil)
			var fe *bundle.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("ReadFile: %v, want a *FormatError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "corrupt") {
				t.Errorf("error %q, want it to say %q and not call the file corrupt", err, tc.want)
			}
		})
	}
	// At the cap the frame is decoded; the patched byte is then found by
	// the checkpoint after it, as damage, not as a window above the cap.
	patched := bytes.Clone(b)
	patched[5] = 16 << 3 // 64 MiB
	p := filepath.Join(t.TempDir(), "cap.zst")
	if err := os.WriteFile(p, patched, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = bundle.ReadFile(p, nil)
	var de *bundle.DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "checkpoint's digest") {
		t.Errorf("a 64 MiB window, the cap, patched in: %v, want the checkpoint to find the change", err)
	}
}

// FuzzOpenHeader: Open reads the first frame header itself to name a window
// above the cap; whatever the first bytes, it returns a bundle or an error.
func FuzzOpenHeader(f *testing.F) {
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x88})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x60})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := bundle.NewReader(bytes.NewReader(b), nil)
		if err == nil {
			r.Close()
		}
	})
}
