package record

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

// A WebSocket message longer than the recording limit is recorded cut at
// it; a secret (given, in the spellings the recorder redacts) or a token
// field that the cut goes through is dropped from the recorded part
// whole, as at the body cap, rather than leaving its start: a start short
// of a stub (8 characters) was recorded as it came. Both directions,
// plain and compressed (inflated past the limit), and a message big enough
// to be recorded off the relay's goroutine.
func TestProxyWebSocketCutAtLimitDropsSecretStart(t *testing.T) {
	testkit.CheckLeaks(t)
	const (
		given = "ws-cap-Q7XK2M9PWD45QTA7"
		value = "learned-ZJBV6FH7WD45X"
	)
	texts := []string{given, spelling.Spell(given, "json-u-lower"), spelling.Spell(given, "pct-upper"),
		spelling.Spell(given, "mixed"), `"token":"` + value + `"`}
	for _, tt := range []struct {
		name  string
		limit int64
		mode  websocket.CompressionMode
		texts []string
	}{
		{"plain", 4096, websocket.CompressionDisabled, texts},
		{"compressed", 4096, websocket.CompressionNoContextTakeover, texts},
		{"big", wsBig + 4096, websocket.CompressionDisabled, texts[:1]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := startEchoUpstream(t, tt.mode)
			r := startRecordingWith(t, up.URL, &Options{Redact: []string{given}, TokenFields: t3.TokenFields},
				ProxyOptions{MaxMessageSize: tt.limit})
			c := dialProxy(t, r, "/ws", &websocket.DialOptions{CompressionMode: tt.mode})
			c.SetReadLimit(2 * tt.limit)
			var want []string
			for _, text := range tt.texts {
				for _, off := range []int{1, 6, len(text) / 2, len(text) - 1} {
					keep := int(tt.limit) - off
					echo(t, c, websocket.MessageText, []byte(strings.Repeat("x", keep)+" "+text+" end"))
					// Recorded: the x's, the space, and of the text only a
					// quote before a field's name.
					lead := min(len(text)-len(strings.TrimLeft(text, `"`)), off-1)
					w := fmt.Sprintf("cut at %d of %d", keep+1+lead, keep+len(text)+5)
					want = append(want, "c2s "+w, "s2c "+w)
				}
			}
			c.Close(websocket.StatusNormalClosure, "")
			r.waitRelays()
			path := r.path
			var got []string
			for _, ev := range ofKinds(r.stop(), "ws.message") {
				got = append(got, fmt.Sprintf("%s cut at %d of %d", ev.Dir, len(ev.Body.Data), ev.Size))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("recorded messages (-want +got):\n%s", diff)
			}
			raw := bytes.ToLower(testkit.Decompress(t, path))
			needles := spelling.Base64Stable(given)
			for _, sp := range spelling.Names {
				// Their starts, shorter than a stub, too.
				for _, s := range []string{given, value} {
					needles = append(needles, spelling.Spell(s[:6], sp))
				}
			}
			for _, n := range needles {
				if i := bytes.Index(raw, []byte(strings.ToLower(n))); i >= 0 {
					t.Errorf("%q found in the bundle: ...%s...", n, raw[max(0, i-40):min(len(raw), i+len(n)+40)])
				}
			}
		})
	}
}
