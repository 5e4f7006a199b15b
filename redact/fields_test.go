package redact

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/t3"
)

// TestTokenFieldsDefault: the default field names are the generic OAuth ones,
// not T3's; T3's come from t3.TokenFields.
func TestTokenFieldsDefault(t *testing.T) {
	for _, c := range []struct {
		fields []string
		in     string
		want   string
	}{
		{nil, "a=1&access_token=abcdefgh&id_token=ijklmnop", "a=1&access_token=[REDACTED]&id_token=[REDACTED]"},
		{nil, "/ws?wsTicket=abcdefgh", "/ws?wsTicket=abcdefgh"},
		{nil, `{"desktopBootstrapToken":"abcdefgh"}`, `{"desktopBootstrapToken":"abcdefgh"}`},
		{t3.TokenFields, "/ws?wsTicket=abcdefgh", "/ws?wsTicket=[REDACTED]"},
		{t3.TokenFields, `{"desktopBootstrapToken":"abcdefgh"}`, `{"desktopBootstrapToken":"[REDACTED]"}`},
		{[]string{"secret"}, `{"secret":"abcdefgh","token":"ijklmnop"}`, `{"secret":"[REDACTED]","token":"ijklmnop"}`},
		{[]string{}, `{"token":"ijklmnop"}`, `{"token":"ijklmnop"}`},
	} {
		if got := Text(c.in, &Options{TokenFields: c.fields}); got != c.want {
			t.Errorf("fields %v: Text(%q) = %q, want %q", c.fields, c.in, got, c.want)
		}
	}
}

// TestFieldSetAnchors: every name holds one of the set's anchors, the
// default names share one anchor pass ('k'), and a name holding two anchors
// is reported once.
func TestFieldSetAnchors(t *testing.T) {
	for _, names := range [][]string{DefaultTokenFields, t3.TokenFields} {
		if got := string(newFieldSet(names).anchors); got != "kK" {
			t.Errorf("anchors of %v = %q, want %q", names, got, "kK")
		}
	}
	fs := newFieldSet([]string{"token", "sessionSecret", "Sess-Token", "TOKEN"})
	if diff := cmp.Diff([]string{"token", "sessionSecret", "Sess-Token"}, fs.names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	for _, n := range fs.names {
		if fs.anchorIn([]byte(n)) < 0 {
			t.Errorf("%q holds no anchor of %q", n, fs.anchors)
		}
	}
	var got []string
	in := []byte(`{"Sess-Token":"a","sessionsecret":"b","TOKEN":"c","tokens":"d"}`)
	fs.each(in, func(start, end int) bool { got = append(got, string(in[start:end])); return true })
	if len(got) != 3 {
		t.Errorf("names found in %s: %q, want each of the three once", in, got)
	}
}

func TestIsTokenFieldName(t *testing.T) {
	for name, want := range map[string]bool{
		"token": true, "wsTicket": true, "x-api_key2": true,
		"": false, "a b": false, "a.b": false, "tökén": false, `"token"`: false,
	} {
		if got := IsTokenFieldName(name); got != want {
			t.Errorf("IsTokenFieldName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestFieldFirstFollower: the scan's table of an anchor's first followers
// rejects only what followers would: for every name set, anchor and pair
// of bytes after it, a byte the table refuses starts no follower pair of
// the anchor's names.
func TestFieldFirstFollower(t *testing.T) {
	for _, names := range [][]string{nil, {"desk", "ask_token"}, {"k_2", "Kx-y", "api-KEY"}, {"q", "zq9"}} {
		fs := newFieldSet(names)
		for ai, a := range fs.anchors {
			for c := range 256 {
				for d := range 256 {
					w := []byte{a, byte(c), byte(d)}
					if !fs.first[ai][c] && slices.Contains(fs.after[ai], followers(w, 0)) {
						t.Fatalf("names %q: anchor %q followed by %q is refused by the table, yet starts a name's follower pair", names, a, w[1:])
					}
				}
			}
		}
	}
}
