package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/bundleindex"
	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/internal/objstore/s3test"
	"github.com/wireproof/wireproof/internal/testkit"
)

// s3Run runs the wireproof binary with a spool of its own and extra
// environment, and returns its exit code, stdout and stderr.
func s3Run(t *testing.T, spoolDir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runBinEnv(t, append([]string{"WIREPROOF_SPOOL=" + spoolDir}, env...), args...)
}

// noSecret fails if the secret key appears in any of the texts.
func noSecret(t *testing.T, what string, texts ...string) {
	t.Helper()
	secret := s3test.Secret()
	if secret == "" {
		t.Fatal("no secret to look for")
	}
	for _, s := range texts {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret access key", what)
		}
	}
}

// keysUnder lists the keys under a prefix, relative to it.
func keysUnder(t *testing.T, c *objstore.Client, prefix objstore.URL) []string {
	t.Helper()
	objs, err := c.List(t.Context(), prefix.Bucket, prefix.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, strings.TrimPrefix(o.Key, prefix.Dir()))
	}
	return keys
}

// spoolFiles lists what is left in a spool directory.
func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	return files
}

// TestS3VerifySuite: a suite writes its runs to a bucket; every verb then
// reads them from there; the objects carry the runs' facts as metadata and
// tags; the secret key is in no output, bundle or index.
func TestS3VerifySuite(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	dest := prefix.String()
	code, stdout, stderr := s3Run(t, sp, nil, "verify", "--scenario", "idle", "--repeat", "2", "--out", dest)
	if code != exitOK {
		t.Fatalf("verify exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Uploaded 5 file(s) to "+dest) || !strings.Contains(stdout, "Replay:  wireproof replay "+dest) {
		t.Errorf("verify output does not name the bucket:\n%s", stdout)
	}
	want := []string{"idle-1.verdict.json", "idle-1.zst", "idle-2.verdict.json", "idle-2.zst", "results.json"}
	if diff := cmp.Diff(want, keysUnder(t, c, prefix)); diff != "" {
		t.Fatalf("objects (-want +got):\n%s", diff)
	}
	if left := spoolFiles(t, sp); len(left) > 0 {
		t.Errorf("the spool still holds %v after a complete upload", left)
	}
	o, err := c.Stat(t.Context(), prefix.Join("idle-2.zst"))
	if err != nil {
		t.Fatal(err)
	}
	tags, err := c.Tags(t.Context(), prefix.Join("idle-2.zst"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]string{o.Meta, tags} {
		if m["scenario"] != "idle" || m["status"] != "passed" || m["iteration"] != "2" {
			t.Errorf("object facts = %v, want scenario idle, status passed, iteration 2", m)
		}
	}
	outputs := []string{stdout, stderr}

	code, stdout, stderr = s3Run(t, sp, nil, "replay", "--json", dest)
	if code != exitOK || strings.Count(stdout, `"outcome":"reproduced"`) != 2 {
		t.Errorf("replay exit %d\n%s\n%s", code, stdout, stderr)
	}
	outputs = append(outputs, stdout, stderr)

	code, stdout, stderr = s3Run(t, sp, nil, "index", dest)
	if code != exitOK {
		t.Fatalf("index exit %d\n%s", code, stderr)
	}
	var entries []bundleindex.Entry
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e bundleindex.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("index line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	if len(entries) != 2 || entries[0].Path != prefix.Join("idle-1.zst").String() || entries[1].Status != "passed" || entries[1].Size != o.Size {
		t.Errorf("index entries = %+v", entries)
	}
	outputs = append(outputs, stdout, stderr)

	dir := t.TempDir()
	bundleURL := prefix.Join("idle-1.zst").String()
	for _, args := range [][]string{
		{"inspect", bundleURL},
		{"report", "-o", filepath.Join(dir, "r.html"), bundleURL},
		{"export", "--har", filepath.Join(dir, "r.har"), bundleURL},
		{"diff", bundleURL, prefix.Join("idle-2.zst").String()},
	} {
		code, stdout, stderr := s3Run(t, sp, nil, args...)
		if code != exitOK && !(args[0] == "diff" && code == exitCheckFailed) {
			t.Errorf("%s: exit %d\n%s\n%s", args[0], code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, "wireproof-s3-") {
			t.Errorf("%s names its temporary copy:\n%s%s", args[0], stdout, stderr)
		}
		outputs = append(outputs, stdout, stderr)
	}
	code, _, stderr = s3Run(t, sp, nil, "inspect", prefix.Join("missing.zst").String())
	if code != exitUnreadable || !strings.Contains(stderr, prefix.Join("missing.zst").String()) {
		t.Errorf("inspect of a missing object: exit %d, stderr %s", code, stderr)
	}
	noSecret(t, "the verbs' output", outputs...)
	for _, k := range want {
		p := filepath.Join(dir, k)
		if err := c.Download(t.Context(), prefix.Join(k), p); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		if strings.HasSuffix(k, ".zst") {
			data = testkit.Decompress(t, p)
		}
		noSecret(t, k, string(data))
	}
}

// TestS3KeepFailed: --keep failed uploads only the runs that did not pass,
// their objects tagged with the failing check.
func TestS3KeepFailed(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	passing, failing := prefix.Join("passing/"), prefix.Join("failing/")
	code, stdout, stderr := s3Run(t, sp, nil, "verify", "--scenario", "idle", "--keep", "failed", "--out", passing.String())
	if code != exitOK || !strings.Contains(stdout, "Not kept (--keep failed): 1 passing run(s)") || !strings.Contains(stdout, passing.Join("idle-1.zst").String()+" (not kept: passed)") {
		t.Fatalf("passing run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if keys := keysUnder(t, c, passing); len(keys) != 0 {
		t.Errorf("a passing run left %v with --keep failed", keys)
	}
	code, stdout, stderr = s3Run(t, sp, nil, "verify", "--scenario", "idle", "--fault", "duplicate-notification", "--keep", "failed", "--out", failing.String())
	if code != exitCheckFailed {
		t.Fatalf("failing run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if diff := cmp.Diff([]string{"idle-1.verdict.json", "idle-1.zst"}, keysUnder(t, c, failing)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	tags, err := c.Tags(t.Context(), failing.Join("idle-1.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if tags["status"] != "failed" || tags["check"] != "single-notification" {
		t.Errorf("tags = %v, want status failed, check single-notification", tags)
	}
	code, _, stderr = s3Run(t, sp, nil, "verify", "--keep", "some", "--out", failing.String())
	if code != exitUsage || !strings.Contains(stderr, "--keep") {
		t.Errorf("--keep some: exit %d, %s", code, stderr)
	}
	code, _, stderr = s3Run(t, sp, nil, "verify", "--scenario", "idle", "--out", failing.String())
	if code != exitOutput || !strings.Contains(stderr, "never overwritten") {
		t.Errorf("a prefix holding the run: exit %d, %s", code, stderr)
	}
}

// TestS3ReplayShards: the shards of a corpus in a bucket cover it exactly
// once, and are the same shards as those of the corpus on disk.
func TestS3ReplayShards(t *testing.T) {
	_, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	if code, stdout, stderr := s3Run(t, sp, nil, "upload", golden, prefix.String()); code != exitOK {
		t.Fatalf("upload exit %d\n%s\n%s", code, stdout, stderr)
	}
	shardRels := func(root string, i string) []string {
		_, stdout, stderr := s3Run(t, sp, nil, "replay", "--json", "--shard", i, root)
		var rels []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var j struct{ Path string }
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				t.Fatalf("replay --shard %s %s: %q: %v\n%s", i, root, line, err, stderr)
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(j.Path, prefix.String()), strings.TrimSuffix(golden, "/")+"/")
			rels = append(rels, rel)
		}
		sort.Strings(rels)
		return rels
	}
	all := map[string]int{}
	for _, i := range []string{"1/2", "2/2"} {
		remote, local := shardRels(prefix.String(), i), shardRels(golden, i)
		if diff := cmp.Diff(local, remote); diff != "" {
			t.Errorf("shard %s differs between disk and bucket (-disk +bucket):\n%s", i, diff)
		}
		if len(remote) == 0 {
			t.Errorf("shard %s is empty", i)
		}
		for _, r := range remote {
			all[r]++
		}
	}
	refs, err := collectBundles(context.Background(), []string{golden})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(refs) {
		t.Errorf("the shards cover %d of %d bundles", len(all), len(refs))
	}
	for rel, n := range all {
		if n != 1 {
			t.Errorf("%s is in %d shards", rel, n)
		}
	}
}

// stallingProxy forwards to the S3 server, but holds every PUT until the
// client goes away, telling puts when one arrives.
func stallingProxy(t *testing.T, puts chan<- string) *httptest.Server {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			select {
			case puts <- r.URL.Path:
			default:
			}
			// Read the body so that the server notices the client going away.
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestS3KilledUploadResumed: a record whose upload is killed midway leaves
// the bundle in the spool; 'wireproof upload' sends it, whole.
func TestS3KilledUploadResumed(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer upstream.Close()
	puts := make(chan string, 1)
	proxy := stallingProxy(t, puts)
	dest := prefix.Join("run.zst")

	cmd := exec.Command(wireproofBin, "record", "--upstream", upstream.URL, "-o", dest.String(), "--", "sh", "-c", `curl -s "$WIREPROOF_PROXY_URL/x" >/dev/null || true`)
	cmd.Env = append(os.Environ(), "WIREPROOF_SPOOL="+sp, "AWS_ENDPOINT_URL="+proxy.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-puts // the upload has begun
	cmd.Process.Kill()
	cmd.Wait()

	if _, err := c.Stat(t.Context(), dest); !objstore.IsNotFound(err) {
		t.Fatalf("after the kill: stat = %v, want not found", err)
	}
	code, stdout, _ := s3Run(t, sp, nil, "upload", "--list")
	if code != exitOK || !strings.Contains(stdout, "1 pending upload(s)") || !strings.Contains(stdout, prefix.String()) {
		t.Fatalf("upload --list: exit %d\n%s", code, stdout)
	}
	code, stdout, errOut := s3Run(t, sp, nil, "upload")
	if code != exitOK || !strings.Contains(stdout, "Uploaded 1 file(s) left by an earlier record to "+prefix.String()) {
		t.Fatalf("upload: exit %d\n%s\n%s", code, stdout, errOut)
	}
	if left := spoolFiles(t, sp); len(left) > 0 {
		t.Errorf("the spool still holds %v", left)
	}
	code, stdout, errOut = s3Run(t, sp, nil, "inspect", dest.String())
	if code != exitOK || !strings.Contains(stdout, "http.request") {
		t.Errorf("inspect of the resumed upload: exit %d\n%s\n%s", code, stdout, errOut)
	}
	noSecret(t, "output", stderr.String(), stdout, errOut)
}

// TestS3UploadFails: when the store keeps refusing uploads the run's files
// stay in the spool, the command says where and exits 5; once the store is
// back, the next run to object storage sends them before its own.
func TestS3UploadFails(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	target, _ := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	rp := httputil.NewSingleHostReverseProxy(target)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>try later</Message></Error>`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer failing.Close()
	code, stdout, stderr := s3Run(t, sp, []string{"AWS_ENDPOINT_URL=" + failing.URL}, "verify", "--scenario", "idle", "--out", prefix.String())
	if code != exitStorage {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitStorage, stdout, stderr)
	}
	if !strings.Contains(stderr, "are kept in "+sp) || !strings.Contains(stderr, "wireproof upload") {
		t.Errorf("stderr does not say where the files are:\n%s", stderr)
	}
	if files := spoolFiles(t, sp); len(files) != 3 { // the manifest, the bundle, the verdict
		t.Errorf("spool holds %v", files)
	}
	noSecret(t, "output", stdout, stderr)
	// The next run to object storage sends them first.
	next := prefix.Join("next/")
	code, stdout, stderr = s3Run(t, sp, nil, "verify", "--scenario", "idle", "--out", next.String())
	if code != exitOK || !strings.Contains(stderr+stdout, "Uploaded 2 file(s) left by an earlier verify to "+prefix.String()) {
		t.Fatalf("next run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := []string{"idle-1.verdict.json", "idle-1.zst", "next/idle-1.verdict.json", "next/idle-1.zst"}
	if diff := cmp.Diff(want, keysUnder(t, c, prefix)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if left := spoolFiles(t, sp); len(left) > 0 {
		t.Errorf("the spool still holds %v", left)
	}
}

// TestS3WrongCredential: a wrong secret is a clear error and exit 5 for
// readers and writers, before a run starts; the secret is never shown.
func TestS3WrongCredential(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	if err := c.Put(t.Context(), prefix.Join("idle.zst"), golden+"/idle.zst", nil); err != nil {
		t.Fatal(err)
	}
	const wrong = "wrong-secret-4f1c2a9e8b7d6c5e"
	env := []string{"AWS_SECRET_ACCESS_KEY=" + wrong}
	for _, args := range [][]string{
		{"replay", prefix.String()},
		{"index", prefix.String()},
		{"inspect", prefix.Join("idle.zst").String()},
		{"verify", "--scenario", "idle", "--out", prefix.Join("out/").String()},
		{"upload", golden + "/idle.zst", prefix.Join("copy/").String()},
	} {
		code, stdout, stderr := s3Run(t, sp, env, args...)
		if code != exitStorage || !strings.Contains(stderr, "credentials refused") || !strings.Contains(stderr, "AWS_SECRET_ACCESS_KEY") {
			t.Errorf("%s: exit %d, want %d and a clear message\n%s\n%s", args[0], code, exitStorage, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, wrong) {
			t.Errorf("%s shows the secret", args[0])
		}
		if args[0] == "verify" && strings.Contains(stdout, "Verification") {
			t.Errorf("verify ran before checking the credentials:\n%s", stdout)
		}
	}
	if left := spoolFiles(t, sp); len(left) > 0 {
		t.Errorf("refused credentials left %v in the spool", left)
	}
}

// TestS3View: view serves a prefix's bundles (copied for the viewer's random
// access) and removes the copies when it stops.
func TestS3View(t *testing.T) {
	_, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	live := filepath.Join(golden, "live")
	if code, stdout, stderr := s3Run(t, sp, nil, "upload", live, prefix.String()); code != exitOK {
		t.Fatalf("upload exit %d\n%s\n%s", code, stdout, stderr)
	}
	tmp := t.TempDir()
	cmd, u, stderr := startView(t, []string{"WIREPROOF_SPOOL=" + sp, "TMPDIR=" + tmp}, prefix.String())
	c := viewCorpus(t, u)
	entries, _ := filepath.Glob(filepath.Join(live, "*.zst"))
	if len(c.Bundles) != len(entries) {
		t.Errorf("view shows %d bundles, want the %d uploaded", len(c.Bundles), len(entries))
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(t, cmd.Wait()); code != 0 {
		t.Errorf("exit %d after SIGINT; stderr: %s", code, stderr.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the copies are left in %s: %v", tmp, left)
	}
}

// TestS3RecordUntilInterrupt: record without a command ends on SIGINT, and
// the recording is uploaded then, to the object -o named.
func TestS3RecordUntilInterrupt(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer upstream.Close()
	dest := prefix.Join("manual/run.zst")
	cmd := exec.Command(wireproofBin, "record", "--upstream", upstream.URL, "-o", dest.String())
	cmd.Env = append(os.Environ(), "WIREPROOF_SPOOL="+sp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var proxyURL string
	if _, err := fmt.Fscanln(out, &proxyURL); err != nil {
		t.Fatalf("no proxy URL: %v\n%s", err, stderr.String())
	}
	resp, err := http.Get(proxyURL + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(t, cmd.Wait()); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Uploaded 1 file(s) to "+prefix.Join("manual/").String()) {
		t.Errorf("stderr does not report the upload:\n%s", stderr.String())
	}
	if _, err := c.Stat(t.Context(), dest); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut := s3Run(t, sp, nil, "inspect", "--kind", "http.request", dest.String())
	if code != exitOK || !strings.Contains(stdout, "/hello") {
		t.Errorf("inspect: exit %d\n%s\n%s", code, stdout, errOut)
	}
	code, _, errOut = s3Run(t, sp, nil, "record", "--upstream", upstream.URL, "-o", dest.String(), "--", "true")
	if code != exitOutput || !strings.Contains(errOut, "never overwritten") {
		t.Errorf("record over an existing object: exit %d, %s", code, errOut)
	}
}

// TestS3RecordCommandThatCannotStart: record -o s3://... of a command that
// is found but cannot be executed exits 127 and leaves neither an object
// nor a spool job behind.
func TestS3RecordCommandThatCannotStart(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	sp := t.TempDir()
	notExec := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(notExec, []byte("\x00\x01 not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	dest := prefix.Join("run.zst")
	code, stdout, stderr := s3Run(t, sp, nil, "record", "--upstream", "http://127.0.0.1:9", "-o", dest.String(), "--", notExec)
	if code != 127 || !strings.Contains(stderr, "cannot run "+notExec) || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 127 naming the command", code, stdout, stderr)
	}
	if files := spoolFiles(t, sp); len(files) != 0 {
		t.Errorf("the spool holds %q", files)
	}
	if keys := keysUnder(t, c, prefix); len(keys) != 0 {
		t.Errorf("the prefix holds %q", keys)
	}
}
