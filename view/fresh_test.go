package view

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// answers is what each endpoint of a running viewer says of bundle id now:
// its HTTP status, with the status of its row where it has one ("-" where
// the corpus does not list it).
func answers(t *testing.T, url, id string) map[string]string {
	t.Helper()
	got := map[string]string{}
	var c CorpusResponse
	code := getJSON(t, url+"/api/bundles", &c)
	got["/api/bundles"] = strconv.Itoa(code) + " -"
	for _, row := range c.Bundles {
		if row.ID == id {
			got["/api/bundles"] = strconv.Itoa(code) + " " + string(row.Status)
		}
	}
	var b BundleResponse
	code = getJSON(t, url+"/api/bundle/"+id, &b)
	got["/api/bundle/ID"] = strconv.Itoa(code) + " " + string(b.Row.Status)
	for _, p := range []string{"/events?limit=1", "/event/1", "/call/0", "/projection?seq=1"} {
		got[p] = strconv.Itoa(getJSON(t, url+"/api/bundle/"+id+p, nil))
	}
	return got
}

// want is what answers returns when the corpus says listed, the bundle's
// page page and every other endpoint rest.
func want(listed, page, rest string) map[string]string {
	return map[string]string{"/api/bundles": listed, "/api/bundle/ID": page,
		"/events?limit=1": rest, "/event/1": rest, "/call/0": rest, "/projection?seq=1": rest}
}

// TestAPIFollowsTheFiles: a running viewer answers every endpoint from the
// bundle file as it is now: damaged in place it is 422 and listed damaged,
// never passed; replaced by an intact file of the same size and time (a
// rename over it: another inode) it is passed again; removed it is 404 and
// no longer listed; a bundle added since the viewer started is listed and
// served. An unchanged bundle is not read again.
func TestAPIFollowsTheFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.zst")
	rewrite(t, filepath.Join(goldenLive, "idle.zst"), good)
	intact, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(good, past, past); err != nil { // not racy: an unchanged file is not read again
		t.Fatal(err)
	}
	srcs, err := Resolve([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(context.Background(), srcs, &Options{Args: []string{dir}})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	ok := want("200 passed", "200 passed", "200")
	if d := cmp.Diff(ok, answers(t, ts.URL, "good")); d != "" {
		t.Fatalf("intact (-want +got):\n%s", d)
	}
	s.mu.Lock()
	o := s.open["good"].Value
	s.mu.Unlock()
	s.rowsMu.Lock()
	fi := s.rows["good"].st.fi
	s.rowsMu.Unlock()
	if d := cmp.Diff(ok, answers(t, ts.URL, "good")); d != "" {
		t.Fatalf("asked again (-want +got):\n%s", d)
	}
	s.mu.Lock()
	reopened := s.open["good"].Value != o
	s.mu.Unlock()
	s.rowsMu.Lock()
	resummarized := s.rows["good"].st.fi != fi
	s.rowsMu.Unlock()
	if reopened || resummarized {
		t.Errorf("the unchanged bundle was read again: page %v, corpus row %v", reopened, resummarized)
	}

	// Damaged in place: the same file, the same size, another time.
	b := append([]byte(nil), intact...)
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	then := past.Add(time.Minute)
	if err := os.Chtimes(good, then, then); err != nil {
		t.Fatal(err)
	}
	damaged := want("200 damaged", "422 ", "422")
	if d := cmp.Diff(damaged, answers(t, ts.URL, "good")); d != "" {
		t.Errorf("damaged in place (-want +got):\n%s", d)
	}

	// Intact again by a rename over it: only the inode tells.
	tmp := filepath.Join(dir, "good.tmp")
	if err := os.WriteFile(tmp, intact, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, then, then); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, good); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ok, answers(t, ts.URL, "good")); d != "" {
		t.Errorf("replaced by the intact bundle (-want +got):\n%s", d)
	}

	// Removed, and another bundle added.
	if err := os.Rename(good, filepath.Join(dir, "added.zst")); err != nil {
		t.Fatal(err)
	}
	gone := want("200 -", "404 ", "404")
	if d := cmp.Diff(gone, answers(t, ts.URL, "good")); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	if d := cmp.Diff(ok, answers(t, ts.URL, "added")); d != "" {
		t.Errorf("added since the viewer started (-want +got):\n%s", d)
	}
}

// TestAPIFollowsTheFilesWithoutArgs: a Server given sources alone (no
// Options.Args) lists no more than them, but still leaves out one whose file
// is gone and answers 404 for it.
func TestAPIFollowsTheFilesWithoutArgs(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "good.zst"))
	_, ts := newTestServer(t, dir)
	if got := answers(t, ts.URL, "good"); got["/api/bundles"] != "200 passed" {
		t.Fatalf("intact: %v", got)
	}
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "added.zst"))
	if err := os.Remove(filepath.Join(dir, "good.zst")); err != nil {
		t.Fatal(err)
	}
	gone := want("200 -", "404 ", "404")
	if d := cmp.Diff(gone, answers(t, ts.URL, "good")); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	var c CorpusResponse
	getJSON(t, ts.URL+"/api/bundles", &c)
	if len(c.Bundles) != 0 {
		t.Errorf("rows %+v, want none", c.Bundles)
	}
}

// TestStampRacy: a file stated less than racyWindow after it was modified
// is trusted until then, and read again once after.
func TestStampRacy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.zst")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := statBundle(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.recheck.IsZero() {
		t.Fatal("a file written just now is not racy")
	}
	b, _ := statBundle(path)
	if !a.holds(b, a.recheck.Add(-time.Millisecond)) || a.holds(b, a.recheck) {
		t.Errorf("racy stamp %v: want it to hold until %v only", a, a.recheck)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(path, past, past)
	c, _ := statBundle(path)
	if !c.recheck.IsZero() || !c.holds(c, time.Now().Add(time.Hour)) {
		t.Errorf("stamp of an old file %v: want it to hold", c)
	}
}
