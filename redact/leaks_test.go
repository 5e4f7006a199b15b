package redact

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
)

// wrap76 writes b64 as the base64 tool and MIME do: a line break every 76
// characters.
func wrap76(b64, nl string) string {
	var out strings.Builder
	for i := 0; i < len(b64); i += 76 {
		out.WriteString(b64[i:min(i+76, len(b64))])
		if i+76 < len(b64) {
			out.WriteString(nl)
		}
	}
	return out.String()
}

// TestRedactWrappedBase64: a secret's base64 is found when a line break of
// 76-column base64 falls anywhere inside it, the break raw, CRLF or a JSON
// escape.
func TestRedactWrappedBase64(t *testing.T) {
	const sec = "Xk9-s3cr3t/T0k&<en>"
	r := New([]string{sec}, nil)
	for pad := range 80 {
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", pad) + sec + " and the rest of the file"))
		for _, nl := range []string{"\n", "\r\n", `\n`, `\r\n`} {
			in := wrap76(enc, nl)
			got := string(r.Bytes([]byte(in), r.Snapshot()))
			for _, part := range spelling.Base64Stable(sec) {
				if strings.Contains(strings.NewReplacer("\n", "", "\r", "", `\n`, "", `\r`, "").Replace(got), part) {
					t.Fatalf("pad %d, break %q: %q survives in %q", pad, nl, part, got)
				}
			}
		}
	}
}

// TestRedactBase64OfASecretAtTheEnd: where a secret ends the encoded text
// (the base64 of the secret on its own, or of a value it ends), every
// character that holds a bit of it is redacted, its padding too: before,
// the last character or two ("[REDACTED]Y=") were left, as they would
// depend on the bytes after the secret in a longer text.
func TestRedactBase64OfASecretAtTheEnd(t *testing.T) {
	for _, sec := range []string{"sk-wp-SECRETVALUE12345", "sk-wp-SECRETVALUE123456", "sk-wp-SECRETVALUE1234567"} {
		r := New([]string{sec}, nil)
		for _, prefix := range []string{"", "u", "user:", "ab"} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				in := `{"b":"` + enc.EncodeToString([]byte(prefix+sec)) + `"}`
				got := string(r.Bytes([]byte(in), r.Snapshot()))
				if !strings.HasSuffix(got, Redacted+`"}`) {
					t.Errorf("%d bytes, prefix %q: %s redacted to %s, want nothing after %s", len(sec), prefix, in, got, Redacted)
				}
			}
		}
	}
}

// TestRedactHeaderNameAndMethod: a secret in a header name is replaced
// whatever case the name was given (Go's server and client change it), and
// one in the method is replaced.
func TestRedactHeaderNameAndMethod(t *testing.T) {
	const sec = "Xk9-s3cr3t-T0ken"
	r := New([]string{sec}, nil)
	ev := &bundle.Event{Kind: bundle.KindHTTPRequest, Method: "GET" + sec, URL: "/", Header: http.Header{
		http.CanonicalHeaderKey("x-" + sec):          {"1"},
		"X-Note-" + spelling.Spell(sec, "pct-lower"): {"2"},
		"Accept": {"*/*"},
	}}
	r.Event(ev, r.Snapshot())
	want := http.Header{"X-[REDACTED]": {"1"}, "X-Note-[REDACTED]": {"2"}, "Accept": {"*/*"}}
	if diff := cmp.Diff(want, ev.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if ev.Method != "GET[REDACTED]" {
		t.Errorf("method %q, want GET[REDACTED]", ev.Method)
	}
}
