package playback

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplain: a miss says in plain words where the client's request first
// differs from the closest recorded one, and how many other places differ;
// what differs between two good runs (ids, ports, times) is passed over
// when something else differs, and named when nothing else does.
func TestExplain(t *testing.T) {
	body := func(s string) value {
		v, ok := decodeJSON([]byte(s))
		if !ok {
			t.Fatalf("not JSON: %s", s)
		}
		return v
	}
	for _, tt := range []struct {
		name      string
		rec, live any
		want      string
	}{
		{"same", body(`{"a":1}`), body(`{"a":1.0}`), ""},
		{"one field", body(`{"threadId":"t-1","n":1}`), body(`{"threadId":"t-2","n":1}`), `threadId: recorded "t-1", client sent "t-2"`},
		{"an id passed over", body(`{"id":"0b6f3f5e-8a8e-4c0b-9d1c-2f8f2f7a1b2c","name":"first"}`), body(`{"id":"5d2c1e0f-1111-4a2b-8c3d-9e8f7a6b5c4d","name":"other"}`), `name: recorded "first", client sent "other"`},
		{"only an id", body(`{"id":"0b6f3f5e-8a8e-4c0b-9d1c-2f8f2f7a1b2c"}`), body(`{"id":"5d2c1e0f-1111-4a2b-8c3d-9e8f7a6b5c4d"}`), `id: recorded "0b6f3f5e-8a8e-4c0b-9d1c-2f8f2f7a1b2c", client sent "5d2c1e0f-1111-4a2b-8c3d-9e8f7a6b5c4d"`},
		{"nested, and more", body(`{"p":{"items":[1,2]},"x":true,"y":"a"}`), body(`{"p":{"items":[1,3]},"x":false,"y":"b"}`), `p.items[1]: recorded 2, client sent 3 (and 2 more differences)`},
		{"absent key", body(`{"a":1,"b":"x"}`), body(`{"a":1}`), `b: recorded "x", client sent none`},
		{"extra key", body(`{"a":1}`), body(`{"a":1,"c d":{"e":1}}`), `["c d"]: not recorded, client sent {"e":1}`},
		{"type", body(`{"a":"1"}`), body(`{"a":{"b":1}}`), `a: recorded "1", client sent {"b":1}`},
		{"longer array", body(`[1]`), body(`[1,2]`), `[1]: not recorded, client sent 2`},
		{"request", newRequest("POST", mustURL(t, "/items/7?limit=2"), []byte(`{"k":"v"}`), "application/json"), newRequest("GET", mustURL(t, "/items/8?limit=2"), nil, ""), `method: recorded POST, client sent GET (and 2 more differences)`},
		{"path", newRequest("GET", mustURL(t, "/items/7"), nil, ""), newRequest("GET", mustURL(t, "/items/8"), nil, ""), `path[1]: recorded "7", client sent "8"`},
		{"text", "hello", "hallo", `the value: recorded "hello", client sent "hallo"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, explain(tt.rec, tt.live)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.ParseRequestURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
