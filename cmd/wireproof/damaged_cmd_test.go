package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay/synth"
)

// passingBundle writes the events of the passing golden run as a bundle of
// the current format and returns its path.
func passingBundle(t *testing.T, dir string) string {
	t.Helper()
	c, err := bundle.ReadFile(filepath.Join("..", "..", "fixtures", "golden", "idle.zst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := json.Marshal(c.Header)
	if err != nil {
		t.Fatal(err)
	}
	evs := append([]bundle.Event{{Kind: bundle.KindHeader, Body: bundle.Text(hb)}}, c.Events...)
	path := filepath.Join(dir, "pass.zst")
	if err := synth.WriteBundle(path, evs); err != nil {
		t.Fatal(err)
	}
	return path
}

func runWireproof(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(wireproofBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return exitStatus(t, cmd.Run()), stdout.String(), stderr.String()
}

// TestDamagedBundleExitCode: bits flipped across a passing bundle make
// replay exit 7 (damaged), never 0 and never a truncated pass, and every
// verb that reads a bundle says damaged with exit 7; the same bundle cut
// short replays as truncated, exit 0.
func TestDamagedBundleExitCode(t *testing.T) {
	dir := t.TempDir()
	pass := passingBundle(t, dir)
	if code, out, errOut := runWireproof(t, "replay", pass); code != 0 || strings.Contains(out, "truncated") {
		t.Fatalf("the intact bundle: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(pass)
	if err != nil {
		t.Fatal(err)
	}
	const flips = 24
	for k := range flips {
		i := 6 + k*(len(data)-7)/(flips-1) // past the magic and the first frame header, to the last byte
		b := bytes.Clone(data)
		b[i] ^= 1 << (k % 8)
		p := filepath.Join(dir, "flip.zst")
		os.Remove(p)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runWireproof(t, "replay", p)
		if code != exitDamaged || !strings.Contains(out+errOut, "damaged") {
			t.Errorf("bit %d of byte %d of %d flipped: replay exit %d, want %d (damaged)\n%s%s", k%8, i, len(data), code, exitDamaged, out, errOut)
		}
	}

	damaged := filepath.Join(dir, "damaged.zst")
	b := bytes.Clone(data)
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", damaged},
		{"replay", "--json", damaged},
		{"replay", dir}, // a directory holding it (and the flip file)
		{"inspect", damaged},
		{"inspect", "--json", damaged},
		{"inspect", "--calls", damaged},
		{"report", "-o", filepath.Join(dir, "r.html"), damaged},
		{"export", "--har", filepath.Join(dir, "r.har"), damaged},
		{"diff", pass, damaged},
		{"index", damaged},
		{"playback", "--listen", "127.0.0.1:0", damaged},
	} {
		code, out, errOut := runWireproof(t, args...)
		if code != exitDamaged || !strings.Contains(out+errOut, "damaged") {
			t.Errorf("wireproof %s: exit %d, want %d naming the damage\n%s%s", strings.Join(args, " "), code, exitDamaged, out, errOut)
		}
	}
	if code, out, _ := runWireproof(t, "index", damaged); !strings.Contains(out, `"status":"damaged"`) {
		t.Errorf("index lists the damaged bundle as %s (exit %d), want status damaged", out, code)
	}

	cut := filepath.Join(dir, "cut.zst")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runWireproof(t, "replay", cut); code == exitDamaged || !strings.Contains(out, "truncated") {
		t.Errorf("a bundle cut at 2/3: replay exit %d, want it read as truncated\n%s%s", code, out, errOut)
	}
}

// TestUploadFindsDamagedBundles: upload, which copies bundles as they are,
// finds the damaged ones among the files and directories it is given (it
// then says so and exits 7 after uploading them, tagged status=damaged).
func TestUploadFindsDamagedBundles(t *testing.T) {
	dir := t.TempDir()
	pass := passingBundle(t, dir)
	data, err := os.ReadFile(pass)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	flipped := filepath.Join(sub, "flipped.zst")
	if err := os.WriteFile(flipped, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := damagedBundles(t.Context(), []string{pass, dir}); len(got) != 1 || got[0] != flipped {
		t.Errorf("damagedBundles = %v, want [%s]", got, flipped)
	}
}

// TestHelpNamesExitDamaged: every verb that exits 7 for a damaged bundle
// (TestDamagedBundleExitCode, TestUploadFindsDamagedBundles, TestScan...)
// says so in its help, beside the other exit codes it lists; index also
// names its exit 6 for -o.
func TestHelpNamesExitDamaged(t *testing.T) {
	damaged := regexp.MustCompile(`(?s)\b7 when a bundle is damaged|damaged[^.]*exits? 7\b`)
	for _, verb := range []string{"replay", "inspect", "report", "export", "diff", "index", "playback", "upload", "scan"} {
		c, _, err := newRootCommand().Find([]string{verb})
		if err != nil {
			t.Fatal(err)
		}
		if !damaged.MatchString(c.Long) {
			t.Errorf("wireproof %s --help does not say that a damaged bundle exits 7:\n%s", verb, c.Long)
		}
	}
	if c, _, _ := newRootCommand().Find([]string{"index"}); !strings.Contains(c.Long, "6 when") {
		t.Errorf("wireproof index --help does not name exit 6 (-o not written, or over a bundle):\n%s", c.Long)
	}
}

// TestDamagedNotUnreadable: stored bytes that changed are damage (exit 7)
// even where what they break first is a line: a bit flipped in a format 1
// bundle (the golden corpora's format), and a format 2 bundle edited and
// compressed again by a zstd tool, which is one frame and no checkpoints,
// not a cut.
func TestDamagedNotUnreadable(t *testing.T) {
	dir := t.TempDir()
	golden, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "golden", "live", "active.zst"))
	if err != nil {
		t.Fatal(err)
	}
	golden[99] ^= 1
	pass, err := os.ReadFile(passingBundle(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := zstdDecoder(t).DecodeAll(pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	edited := enc.EncodeAll(bytes.Replace(plain, []byte(`"phase"`), []byte(`"PHASE"`), 1), nil)
	enc.Close()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"format 1 flipped", golden, "the zstd frame's content checksum does not match its content; the first bad line it produced: line 41"},
		{"format 2 recompressed", edited, "after the header: not as a wireproof writer writes it, which ends the first frame after the header line (recompressed?)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".zst")
			if err := os.WriteFile(p, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, verb := range []string{"replay", "inspect"} {
				code, out, errOut := runWireproof(t, verb, p)
				if code != exitDamaged || !strings.Contains(out+errOut, tc.want) {
					t.Errorf("wireproof %s: exit %d, want %d saying %q\n%s%s", verb, code, exitDamaged, tc.want, out, errOut)
				}
			}
		})
	}
}

func zstdDecoder(t *testing.T) *zstd.Decoder {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dec.Close)
	return dec
}
