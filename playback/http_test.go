package playback

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/t3"
)

// itemStore is a tiny REST server: items created with the client's own id,
// read, and renamed, with a server-made revision id and a timestamp.
func itemStore() http.Handler {
	var mu sync.Mutex
	items := map[string]map[string]any{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		mu.Lock()
		items[in.ID] = map[string]any{"id": in.ID, "name": in.Name, "revision": t3.NewUUID(), "createdAt": time.Now().UTC().Format(time.RFC3339Nano)}
		out := items[in.ID]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/items/"+in.ID)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		it, ok := items[r.PathValue("id")]
		var b []byte
		if ok {
			b, _ = json.Marshal(it)
		}
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("PATCH /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Name      string `json:"name"`
			CommandID string `json:"commandId"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		mu.Lock()
		it := items[r.PathValue("id")]
		it["name"] = in.Name
		it["lastCommand"] = in.CommandID
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

type item struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Revision    string `json:"revision"`
	CreatedAt   string `json:"createdAt"`
	LastCommand string `json:"lastCommand"`
}

// readModifyRead creates an item with a fresh id, reads it, renames it with
// a fresh command id and reads it again, as a client of itemStore does.
func readModifyRead(t *testing.T, base string) (id, cmdID string, reads []item) {
	t.Helper()
	id, cmdID = t3.NewUUID(), t3.NewUUID()
	do := func(method, path, body string) *http.Response {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+t3.NewUUID()) // a credential that differs every run
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return res
	}
	read := func() {
		res := do("GET", "/items/"+id, "")
		defer res.Body.Close()
		var it item
		if res.StatusCode != 200 {
			b, _ := io.ReadAll(res.Body)
			t.Fatalf("GET /items/%s: %d %s", id, res.StatusCode, b)
		}
		json.NewDecoder(res.Body).Decode(&it)
		reads = append(reads, it)
	}
	res := do("POST", "/items", fmt.Sprintf(`{"name":"first","id":%q}`, id))
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || res.Header.Get("Location") != "/items/"+id {
		t.Fatalf("POST /items: %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	read()
	res = do("PATCH", "/items/"+id, fmt.Sprintf(`{"commandId":%q,"name":"second"}`, cmdID))
	res.Body.Close()
	read()
	return id, cmdID, reads
}

func TestReadModifyRead(t *testing.T) {
	var recID, recCmd string
	var recorded []item
	path := recordSession(t, itemStore(), func(base string) { recID, recCmd, recorded = readModifyRead(t, base) })

	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	id, cmd, played := readModifyRead(t, srv.URL)
	if id == recID {
		t.Fatal("the client made the same id twice")
	}
	// The client gets its own ids back; what the server made (revision,
	// time) is as recorded.
	want := make([]item, len(recorded))
	for i, it := range recorded {
		it.ID = id
		if it.LastCommand == recCmd {
			it.LastCommand = cmd
		}
		want[i] = it
	}
	if d := cmp.Diff(want, played); d != "" {
		t.Errorf("reads in playback (-want +got):\n%s", d)
	}
	if played[0].Name != "first" || played[1].Name != "second" {
		t.Errorf("names = %q, %q; want first, then second (read, modify, read again in recorded order)", played[0].Name, played[1].Name)
	}
	if got := srv.Player.IDs(); got[recID] != id || got[recCmd] != cmd {
		t.Errorf("learned ids = %v, want %s->%s and %s->%s", got, recID, id, recCmd, cmd)
	}
	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() || rep.Played != 4 {
		t.Errorf("report = %+v, want 4 played and nothing missed", rep)
	}
}

func TestMissNamesClosestCandidate(t *testing.T) {
	path := recordSession(t, itemStore(), func(base string) { readModifyRead(t, base) })
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})

	// A create with another name matches nothing; the closest is the
	// recorded create, and the diff names the field.
	res, err := http.Post(srv.URL+"/items", "application/json", strings.NewReader(fmt.Sprintf(`{"id":%q,"name":"other"}`, t3.NewUUID())))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("status = %d, want 404", res.StatusCode)
	}
	var got struct {
		Error string `json:"error"`
		Miss  Miss   `json:"miss"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("miss body %s: %v", body, err)
	}
	if got.Miss.Closest != "POST /items" || got.Miss.ClosestSeq == 0 {
		t.Errorf("closest = %q (seq %d), want POST /items", got.Miss.Closest, got.Miss.ClosestSeq)
	}
	// The first difference in plain words; the ids (UUIDs on both sides)
	// are passed over.
	if want := `body.name: recorded "first", client sent "other"`; got.Miss.Diff != want {
		t.Errorf("diff = %q, want %q", got.Miss.Diff, want)
	}
	if want := `; first difference: body.name: recorded "first", client sent "other"`; !strings.HasSuffix(got.Error, want) || strings.Contains(got.Error, "Inverse") {
		t.Errorf("error text %q does not end with %q", got.Error, want)
	}
	if !strings.Contains(got.Error, "closest recorded") {
		t.Errorf("error text %q does not name the closest candidate", got.Error)
	}
	rep, _ := srv.Close(context.Background())
	if len(rep.Misses) != 1 || len(rep.Unplayed) != 4 || rep.Clean() {
		t.Errorf("report: %d misses, %d unplayed; want 1 and the 4 recorded exchanges", len(rep.Misses), len(rep.Unplayed))
	}
}

// TestIDBoundOnce: once a recorded id is bound to the client's, another
// client id in its place is a miss that says so.
func TestIDBoundOnce(t *testing.T) {
	var recID string
	path := recordSession(t, itemStore(), func(base string) { recID, _, _ = readModifyRead(t, base) })
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	id := t3.NewUUID()
	res, _ := http.Post(srv.URL+"/items", "application/json", strings.NewReader(fmt.Sprintf(`{"id":%q,"name":"first"}`, id)))
	res.Body.Close()
	res, _ = http.Get(srv.URL + "/items/" + t3.NewUUID())
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte(recID)) {
		t.Errorf("GET of another id: %d %s; want 404 naming the binding of %s", res.StatusCode, body, recID)
	}
}

// TestCompressedBodyServedDecoded: the recorder keeps a gzip body decoded,
// so playback serves it as identity, without the Content-Encoding it no
// longer has.
func TestCompressedBodyServedDecoded(t *testing.T) {
	const text = `{"hello":"compressed world"}`
	gz := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, text)
		zw.Close()
	})
	get := func(url string) (string, string) {
		tr := &http.Transport{DisableCompression: true}
		defer tr.CloseIdleConnections()
		res, err := (&http.Client{Transport: tr}).Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.Header.Get("Content-Encoding"), string(b)
	}
	path := recordSession(t, gz, func(base string) { get(base + "/z") })
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	enc, body := get(srv.URL + "/z")
	if enc != "" || body != text {
		t.Errorf("served Content-Encoding %q body %q, want identity %q", enc, body, text)
	}
}

func TestShapeIndex(t *testing.T) {
	u := func(s string) *url.URL { v, _ := url.Parse(s); return v }
	recs := []request{
		newRequest("GET", u("/items/0f8fad5b-d9cb-469f-a165-70867728950e"), nil, ""),
		newRequest("GET", u("/items/0f8fad5b-d9cb-469f-a165-70867728950e/x"), nil, ""),
		newRequest("POST", u("/items"), nil, ""),
		newRequest("GET", u("/a/[REDACTED]"), nil, ""),
		newRequest("GET", u("/items/7c9e6679-7425-40de-944b-e07fc1f90ae7?q=1"), nil, ""),
	}
	x := newShapeIndex(recs)
	live := newRequest("GET", u("/items/"+t3.NewUUID()), nil, "")
	if got := x.candidates(&live); !slices.Equal(got, []int{0, 3, 4}) {
		t.Errorf("candidates = %v, want [0 3 4] (the same shape, and the path with a credential)", got)
	}
	other := newRequest("DELETE", u("/nothing"), nil, "")
	if got := x.candidates(&other); got != nil {
		t.Errorf("candidates of an unknown shape = %v, want nil (everything is tried)", got)
	}
}
