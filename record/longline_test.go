//go:build unix

package record

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
)

// capLine is a line a helper prints: fill bytes of filler ("y" on stdout,
// "z" on stderr), then text.
type capLine struct {
	stderr bool
	fill   int
	text   string
}

func (l capLine) String() string { return l.filler(l.fill) + l.text }

func (l capLine) filler(n int) string {
	if l.stderr {
		return strings.Repeat("z", n)
	}
	return strings.Repeat("y", n)
}

// redacted returns the line as red redacts it whole. Only the end of the
// filler is redacted with the text (as much of it as keeps the text's
// place in a base64 word): the redactor is slow on a megabyte.
func (l capLine) redacted(red func(string) string) string {
	keep := min(l.fill, 16+l.fill%4)
	return l.filler(l.fill-keep) + red(l.filler(keep)+l.text)
}

func (l capLine) arg() string {
	s := "o:"
	if l.stderr {
		s = "e:"
	}
	return s + strconv.Itoa(l.fill) + ":" + hex.EncodeToString([]byte(l.text))
}

// aroundCap returns, for each text, lines that put it across the cut at max
// at several offsets: starting 1, 10 and 13 bytes before the cut, with its
// middle on it, and ending one byte after it. Each line ends with " end".
func aroundCap(max int, stderr bool, texts ...string) []capLine {
	var out []capLine
	for _, text := range texts {
		var offs []int
		for _, off := range []int{1, 10, 13, len(text) / 2, len(text) - 1} {
			if off >= 1 && off < len(text) && !slices.Contains(offs, off) {
				offs = append(offs, off)
			}
		}
		for _, off := range offs {
			out = append(out, capLine{stderr: stderr, fill: max - off, text: text + " end"})
		}
	}
	return out
}

// A log line longer than the cap is recorded in pieces, cut by the
// recorder; a secret that crosses the cut (a secret given, in the
// spellings the recorder redacts, or a token field's value, learned from
// that line) is redacted whole, and the pieces rebuild the line as it is
// redacted whole. Tested with real processes: a supervised server's stdout
// and stderr (Process), and a tapped command's stdout (TapCommand).
func TestLongLineSecretAcrossTheCap(t *testing.T) {
	testkit.CheckLeaks(t)
	const (
		given = "boot-Q7XK2M9PWD45QTA7" // the bootstrap token
		value = "learned-ZJBV6FH7WD45X" // the value of a token field, learned from the line
	)
	b64 := base64.StdEncoding.EncodeToString([]byte("xx" + given + "yyyy"))
	spelled := []string{given, b64}
	for _, sp := range []string{"json-u-lower", "pct-upper", "mixed"} {
		spelled = append(spelled, spelling.Spell(given, sp))
	}
	fields := []string{
		"token=" + given, // the outside tester's line: the field's name ends the filler
		" token=" + value,
		` "token":"` + value + `"`,
		" token%3D" + value + "&",
		" token: " + value,
	}
	redacted := func(s string) string {
		return redact.Text(s, &redact.Options{Secrets: []string{given}, TokenFields: t3.TokenFields})
	}
	raw := func(s string) string { return strings.ReplaceAll(s, given, redact.Redacted) }
	for _, tt := range []struct {
		name     string
		max      int // ProcessOptions.MaxLine; 0 for the default, MaxLineBytes
		recorder *Options
		tap      bool                // TapCommand's stdout rather than a Process
		given    []string            // ProcessOptions.Redact
		out, err []string            // the texts put across the cut on stdout and stderr
		want     func(string) string // a line recorded whole
	}{
		{
			name:     "process, verify's redaction",
			recorder: &Options{Redact: []string{given}, TokenFields: t3.TokenFields},
			given:    []string{given},
			out:      spelled,
			err:      fields,
			want:     redacted,
		},
		{
			name:     "process, secret given to the process only",
			max:      4096,
			recorder: &Options{TokenFields: t3.TokenFields},
			given:    []string{given},
			out:      spelled,
			err:      fields,
			want:     redacted,
		},
		{
			name:  "process, not recorded by a Recorder",
			max:   4096,
			given: []string{given},
			out:   []string{given},
			err:   []string{"token=" + given},
			want:  raw,
		},
		{
			name:     "tap",
			recorder: &Options{Redact: []string{given}, TokenFields: t3.TokenFields},
			tap:      true,
			out:      append(slices.Clone(spelled), fields...),
			want:     redacted,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			capAt := tt.max
			if capAt == 0 {
				capAt = MaxLineBytes
			}
			lines := append(aroundCap(capAt, false, tt.out...), aroundCap(capAt, true, tt.err...)...)
			var args []string
			for _, l := range lines {
				args = append(args, l.arg())
			}
			var evs []bundle.Event
			var path string
			if tt.recorder != nil {
				var rec *Recorder
				rec, path = newFileRecorder(t, tt.recorder)
				if tt.tap {
					cmd := testkit.HelperCommand("print-hex", args...)
					if err := TapCommand(t.Context(), rec, "stdio", cmd); err != nil {
						t.Fatal(err)
					}
				} else {
					p := startHelper(t, rec, "print-hex", &ProcessOptions{Argv: args, Redact: tt.given, MaxLine: tt.max})
					waitClosed(t, p.Done(), "exit")
				}
				if err := rec.Close(); err != nil {
					t.Fatal(err)
				}
				evs = readBundle(t, path)
			} else {
				var log eventLog
				p := startHelper(t, &log, "print-hex", &ProcessOptions{Argv: args, Redact: tt.given, MaxLine: tt.max})
				waitClosed(t, p.Done(), "exit")
				for _, ev := range log.events() {
					evs = append(evs, *ev)
				}
			}

			// The pieces of each stream, joined into lines, and all of
			// them joined, so a secret cut in two is seen whole.
			got := map[bool][]string{}
			joined := map[bool]*strings.Builder{false: {}, true: {}}
			cur := map[bool]*strings.Builder{false: {}, true: {}}
			for _, ev := range evs {
				if ev.Kind != bundle.KindProcLog && ev.Kind != bundle.KindStdioLine {
					continue
				}
				stderr := ev.Type == bundle.TypeStderr
				cur[stderr].Write(ev.Body.Data)
				joined[stderr].Write(ev.Body.Data)
				if len(ev.Body.Data) > capAt+64<<10 {
					t.Errorf("a piece of %d bytes, past the cap (%d) and any hold-back", len(ev.Body.Data), capAt)
				}
				if string(ev.Attrs) != `{"partial":true}` {
					got[stderr] = append(got[stderr], cur[stderr].String())
					cur[stderr].Reset()
				}
			}
			want := map[bool][]string{}
			for _, l := range lines {
				want[l.stderr] = append(want[l.stderr], l.redacted(tt.want))
			}
			for _, stderr := range []bool{false, true} {
				if diff := cmp.Diff(summarize(want[stderr]), summarize(got[stderr])); diff != "" {
					t.Errorf("lines of stderr=%v, each summarized (-want +got):\n%s", stderr, diff)
				}
			}

			needles := spelling.Base64Stable(given)
			for _, sp := range spelling.Names {
				needles = append(needles, spelling.Spell(given, sp), spelling.Spell(value, sp))
			}
			outputs := map[string]string{"joined stdout": joined[false].String(), "joined stderr": joined[true].String()}
			if path != "" {
				outputs["decompressed bundle"] = string(testkit.Decompress(t, path))
			}
			for name, out := range outputs {
				lo := strings.ToLower(out)
				for _, n := range needles {
					if i := strings.Index(lo, strings.ToLower(n)); i >= 0 {
						t.Errorf("%q found in the %s: ...%s...", n, name, out[max(0, i-40):min(len(out), i+len(n)+40)])
					}
				}
			}
		})
	}
}

// summarize returns each line as its length and the text around its first
// byte that is not filler, to compare lines of a megabyte.
func summarize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		j := strings.IndexFunc(l, func(r rune) bool { return r != 'y' && r != 'z' })
		if j < 0 {
			j = len(l)
		}
		out[i] = fmt.Sprintf("%d bytes, from %d: %q", len(l), j, l[max(0, j-8):])
	}
	return out
}
